"""End-to-end coreference resolution by span ranking (Lee et al. 2017; the ELMo paper's
coreference model).

    each sentence: embedders [ELMo at the input, run sentence by sentence] -> lexical dropout
      -> the context encoder (a BiLSTM over the sentence) [; ELMo at its output]
      -> the document's tokens end to end
    every span of at most ``max_span_width`` tokens within a sentence:
      g = [x_start; x_end; attention-weighted head of its token embeddings; width feature]
      (``modules/spans.py``, shared with the other span-based tasks)
      mention score s_m(g); the best ``spans_per_word`` x tokens spans are kept
    each kept span i and each of the (up to) ``max_antecedents`` kept spans before it, j:
      s(i, j) = s_m(i) + s_m(j) + s_a([g_i; g_j; g_i * g_j; distance, speaker, genre features])
      and the dummy antecedent (not a mention, or the first of its entity) scoring 0
    training: the marginal log-likelihood of the gold antecedents (the dummy when none);
    decoding: each span's best antecedent; linked spans form the clusters.
Both scorers apply their first linear layer part by part (the same function, computed faster):
g is built for the kept spans only, and no pair's concatenation is built at all.
"""

from __future__ import annotations

from typing import Annotated, Any

import torch

from elmo_experiments.config.registry import (
    Bounds,
    Encoder,
    Probability,
    Size,
    TokenEmbedders,
    Widths,
    register,
)
from elmo_experiments.data.batching import Batch
from elmo_experiments.data.vocabulary import Vocabulary
from elmo_experiments.metrics.accuracy import CategoricalAccuracy
from elmo_experiments.modules.documents import document_tokens
from elmo_experiments.modules.dropout import Dropout
from elmo_experiments.modules.embedders.stack import EmbedderStack
from elmo_experiments.modules.feedforward import FeedForward
from elmo_experiments.modules.indexing import gather_rows
from elmo_experiments.modules.spans import (
    DISTANCE_BUCKETS,
    distance_buckets,
    enumerate_spans,
    projected_span_representations,
    prune_spans,
    span_representations,
)

GENRES = ("bc", "bn", "mz", "nw", "pt", "tc", "wb")  # OntoNotes' genres; others: unknown


def _first_layer(scorer: torch.nn.Sequential) -> torch.nn.Linear:
    """A scorer's (``Sequential(FeedForward, Linear)``) first linear layer, which the model
    applies part by part to its input."""
    return scorer[0].layers[0]


def _after_first_layer(scorer: torch.nn.Sequential, hidden: torch.Tensor) -> torch.Tensor:
    """The rest of the scorer on its first layer's output: (..., h) -> scores (...)."""
    feedforward, output = scorer
    return output(feedforward.layers[1:](hidden)).squeeze(-1)


class CoreferenceResolver(torch.nn.Module):
    """Mentions and their antecedents over candidate spans; see the module docstring."""

    def __init__(
        self,
        vocab: Vocabulary,
        token_embedders: TokenEmbedders,
        context_encoder: Encoder,
        feedforward_dims: Widths = (150, 150),  # the mention and antecedent scorers'
        feature_size: Size = 20,
        max_span_width: Size = 10,
        # spans kept after mention scoring, per document token
        spans_per_word: Annotated[float, Bounds(1e-6, 10.0)] = 0.4,
        max_antecedents: Size = 250,
        lexical_dropout: Probability = 0.5,  # on the token embeddings (ELMo included)
        dropout: Probability = 0.2,  # in the scorers
    ) -> None:
        super().__init__()
        self.embedder = EmbedderStack(
            {key: spec.build(vocab=vocab) for key, spec in token_embedders.items()})
        embedded = self.embedder.output_dim
        self.context_encoder = context_encoder.build(input_dim=embedded)
        encoded = self.context_encoder.output_dim + self.embedder.extra_dim()  # [h; ELMo]
        self.lexical_dropout = Dropout(lexical_dropout)
        self.head_scorer = torch.nn.Linear(encoded, 1)
        # its bias cancels in the softmax over each span's tokens, so it cannot learn (its
        # gradient is zero up to rounding): frozen at its initial value, not removed, which would
        # shift the initial draws of every later parameter
        self.head_scorer.bias.requires_grad_(False)
        self.width_embedding = torch.nn.Embedding(max_span_width, feature_size)
        span_dim = 2 * encoded + embedded + feature_size
        self.mention_scorer = torch.nn.Sequential(
            FeedForward(span_dim, list(feedforward_dims), "relu", dropout),
            torch.nn.Linear(feedforward_dims[-1], 1))
        self.distance_embedding = torch.nn.Embedding(DISTANCE_BUCKETS, feature_size)
        self.speaker_embedding = torch.nn.Embedding(3, feature_size)  # same, other, unknown
        self.genre_embedding = torch.nn.Embedding(len(GENRES) + 1, feature_size)
        self.antecedent_scorer = torch.nn.Sequential(
            FeedForward(3 * span_dim + 3 * feature_size, list(feedforward_dims), "relu",
                        dropout),
            torch.nn.Linear(feedforward_dims[-1], 1))
        self.max_span_width = max_span_width
        self.spans_per_word = spans_per_word
        self.max_antecedents = max_antecedents
        self.mention_recall = CategoricalAccuracy("mention_recall")  # gold mentions kept
        self.antecedent_accuracy = CategoricalAccuracy("antecedent_accuracy")
        self.metrics = [self.mention_recall, self.antecedent_accuracy]

    # -- spans -------------------------------------------------------------------------------
    def _span_embeddings(self, encoded: torch.Tensor, embedded: torch.Tensor,
                         spans: torch.Tensor) -> torch.Tensor:
        """encoded: (batch, T, e); embedded: (batch, T, d); spans: (batch, n, 2) ->
        (batch, n, 2e + d + f): ``modules.spans.span_representations`` (the parameters stay
        the model's own, under their names)."""
        return span_representations(encoded, embedded, spans, self.head_scorer,
                                    self.width_embedding)

    def _mention_scores(self, encoded: torch.Tensor, embedded: torch.Tensor,
                        spans: torch.Tensor) -> torch.Tensor:
        """s_m(g) of every candidate span -> (batch, n), without building g (the scorer's
        first layer applied part by part: ``modules.spans.projected_span_representations``)."""
        hidden = projected_span_representations(
            encoded, embedded, spans, self.head_scorer, self.width_embedding,
            _first_layer(self.mention_scorer))  # (batch, n, h)
        return _after_first_layer(self.mention_scorer, hidden)  # (batch, n)

    # -- antecedents -------------------------------------------------------------------------
    def _pair_features(self, spans: torch.Tensor, antecedents: torch.Tensor,
                       offsets: torch.Tensor, metadata: list[dict[str, Any]]) -> torch.Tensor:
        """spans: (batch, k, 2); antecedents: (batch, k, a) indices into the k spans; offsets:
        (a,) -> distance, speaker and genre features (batch, k, a, 3f)."""
        batch, k, a = antecedents.shape
        distance = self.distance_embedding(distance_buckets(offsets))  # (a, f)
        speaker_ids = torch.full((batch, k, a), 2, dtype=torch.long, device=spans.device)
        genre_ids = torch.full((batch,), len(GENRES), dtype=torch.long, device=spans.device)
        for row, meta in enumerate(metadata):
            speakers = [s for sentence in (meta.get("speakers") or []) for s in (sentence or [])]
            if speakers:
                token_speaker = {s: i for i, s in enumerate(dict.fromkeys(speakers))}
                ids = torch.tensor([token_speaker[s] for s in speakers], device=spans.device)
                own = ids[spans[row, :, 0].clamp(max=len(ids) - 1)]  # (k,)
                speaker_ids[row] = (own[:, None] != own[antecedents[row]]).long()
            genre = meta.get("genre")
            if genre in GENRES:
                genre_ids[row] = GENRES.index(genre)
        return torch.cat([
            distance[None, None].expand(batch, k, -1, -1),
            self.speaker_embedding(speaker_ids),
            self.genre_embedding(genre_ids)[:, None, None].expand(-1, k, a, -1)], dim=-1)

    def _pair_scores(self, top_embeddings: torch.Tensor, antecedents: torch.Tensor,
                     features: torch.Tensor) -> torch.Tensor:
        """s_a([g_i; g_j; g_i * g_j; features]) without building the concatenation, which
        dominated training time: the scorer's first linear layer splits over the four blocks,
        so the g_i and g_j blocks are multiplied once per span, not once per pair (the same
        function and parameters; sums round differently, ~1e-7).

        top_embeddings: (batch, k, g); antecedents: (batch, k, a) indices into the k spans;
        features: (batch, k, a, 3f) -> (batch, k, a)."""
        first = _first_layer(self.antecedent_scorer)
        g = top_embeddings.shape[-1]
        w_own, w_other, w_product, w_features = first.weight.split([g, g, g, features.shape[-1]],
                                                                   dim=1)  # each (h, .)
        linear = torch.nn.functional.linear
        others = gather_rows(top_embeddings, antecedents)  # (batch, k, a, g)
        as_own = linear(top_embeddings, w_own, first.bias)  # (batch, k, h)
        as_other = gather_rows(linear(top_embeddings, w_other), antecedents)  # (batch, k, a, h)
        hidden = (as_own[:, :, None] + as_other
                  + linear(top_embeddings[:, :, None] * others, w_product)
                  + linear(features, w_features))  # (batch, k, a, h)
        return _after_first_layer(self.antecedent_scorer, hidden)

    def forward(self, document: dict[str, torch.Tensor], document_mask: torch.Tensor,
                metadata: list[dict[str, Any]] | None = None, **_: Any) -> dict[str, Any]:
        metadata = metadata or [{} for _ in range(document_mask.shape[0])]
        batch, sentences, width = document_mask.shape
        embedded = self.embedder(document)  # input (batch, s, w, d); ELMo at the output, if any
        inputs = self.lexical_dropout(embedded.input)
        flat_mask = document_mask.reshape(batch * sentences, width)
        states = self.context_encoder(inputs.reshape(batch * sentences, width, -1), flat_mask)
        encoded = embedded.beside(states.reshape(batch, sentences, width, -1))
        encoded = document_tokens(encoded, document_mask)  # (batch, T, e)
        words = document_tokens(inputs, document_mask)  # (batch, T, d)
        sentence_ids = document_tokens(
            torch.arange(sentences, device=document_mask.device)[None, :, None].expand(
                batch, -1, width), document_mask)  # (batch, T)
        lengths = document_mask.reshape(batch, -1).sum(1)  # (batch,)

        spans, span_mask = enumerate_spans(sentence_ids, lengths, self.max_span_width)
        mention_scores = self._mention_scores(encoded, words, spans)  # (batch, n)
        keep = torch.minimum((lengths.float() * self.spans_per_word).floor().long().clamp(min=1),
                             span_mask.sum(1))
        kept, kept_mask = prune_spans(mention_scores, span_mask, keep)  # (batch, k)
        top_spans = spans.gather(1, kept[..., None].expand(-1, -1, 2))  # (batch, k, 2)
        top_embeddings = self._span_embeddings(encoded, words, top_spans)  # (batch, k, g)
        top_scores = mention_scores.gather(1, kept).masked_fill(~kept_mask, -1e4)  # (batch, k)

        k = top_spans.shape[1]
        a = max(1, min(self.max_antecedents, k - 1))
        offsets = torch.arange(1, a + 1, device=spans.device)  # (a,)
        antecedents = torch.arange(k, device=spans.device)[:, None] - offsets[None, :]  # (k, a)
        valid = (antecedents >= 0)[None] & kept_mask[:, :, None]  # (batch, k, a)
        antecedents = antecedents.clamp(min=0)[None].expand(batch, -1, -1)  # (batch, k, a)
        valid = valid & kept_mask.gather(1, antecedents.reshape(batch, -1)).reshape(batch, k, a)
        pair_scores = self._pair_scores(
            top_embeddings, antecedents,
            self._pair_features(top_spans, antecedents, offsets, metadata))  # (batch, k, a)
        scores = (pair_scores + top_scores[:, :, None]
                  + top_scores.gather(1, antecedents.reshape(batch, -1)).reshape(batch, k, a))
        scores = scores.masked_fill(~valid, -1e4)
        scores = torch.cat([scores.new_zeros(batch, k, 1), scores], dim=-1)  # dummy first

        predicted = scores.argmax(-1) - 1  # (batch, k): -1 is the dummy
        output: dict[str, Any] = {"top_spans": top_spans, "top_mask": kept_mask,
                                  "antecedents": antecedents, "predicted_antecedents": predicted,
                                  "antecedent_scores": scores}
        if all(meta.get("clusters") is not None for meta in metadata):
            output["loss"] = self._loss(scores, top_spans, kept_mask, antecedents, valid,
                                        predicted, metadata)
        return output

    def _loss(self, scores: torch.Tensor, top_spans: torch.Tensor, kept_mask: torch.Tensor,
              antecedents: torch.Tensor, valid: torch.Tensor, predicted: torch.Tensor,
              metadata: list[dict[str, Any]]) -> torch.Tensor:
        """The negative marginal log-likelihood of the gold antecedents, summed over a
        document's kept spans, averaged over the documents."""
        batch, k, a = antecedents.shape
        cluster_of = torch.full((batch, k), -1, dtype=torch.long, device=scores.device)
        for row, meta in enumerate(metadata):
            gold = {(s, e): c for c, cluster in enumerate(meta["clusters"]) for s, e in cluster}
            spans = top_spans[row].tolist()
            cluster_of[row] = torch.tensor([gold.get((s, e), -1) for s, e in spans],
                                           device=scores.device)
            found = sum(1 for (s, e), ok in zip(spans, kept_mask[row].tolist(), strict=True)
                        if ok and (s, e) in gold)
            self.mention_recall.add(found, len(gold))
        cluster_of = cluster_of.masked_fill(~kept_mask, -1)
        theirs = cluster_of.gather(1, antecedents.reshape(batch, -1)).reshape(batch, k, a)
        same = (theirs == cluster_of[:, :, None]) & (cluster_of[:, :, None] >= 0) & valid
        gold = torch.cat([~same.any(-1, keepdim=True), same], dim=-1)  # (batch, k, a + 1)
        log_norm = torch.logsumexp(scores, dim=-1)
        log_gold = torch.logsumexp(scores.masked_fill(~gold, float("-inf")), dim=-1)
        losses = ((log_norm - log_gold) * kept_mask).sum(1)  # (batch,)
        right = gold.gather(2, (predicted + 1)[..., None]).squeeze(-1) & kept_mask
        self.antecedent_accuracy.add(right.sum().item(), kept_mask.sum().item())
        return losses.mean()


    def human_readable(self, output: dict[str, Any], batch: Batch) -> list[dict[str, Any]]:
        """Per document part: its id, part, and predicted clusters (lists of [start, end]
        inclusive token indices over the part's tokens end to end)."""
        records = []
        for row, meta in enumerate(batch.metadata):
            spans = output["top_spans"][row].tolist()
            kept = output["top_mask"][row].tolist()
            links = output["predicted_antecedents"][row].tolist()
            candidates = output["antecedents"][row].tolist()
            cluster_of: dict[int, int] = {}
            clusters: list[list[tuple[int, int]]] = []
            for i, (span, ok, link) in enumerate(zip(spans, kept, links, strict=True)):
                if not ok or link < 0:
                    continue
                j = candidates[i][link]
                if j not in cluster_of:
                    cluster_of[j] = len(clusters)
                    clusters.append([tuple(spans[j])])
                cluster_of[i] = cluster_of[j]
                clusters[cluster_of[j]].append(tuple(span))
            records.append({"document_id": meta.get("document_id"), "part": meta.get("part"),
                            "clusters": [sorted([list(s) for s in set(c)]) for c in clusters]})
        return records


register("model", "coref", context=("vocab",))(CoreferenceResolver)
