"""Coreference's official evaluation: the CoNLL-2012 reference scorer's (``scorer.pl`` v8.01,
Pradhan et al. 2014) MUC, B-cubed and CEAF-e figures and their mean, the CoNLL F1.

A document's entities are clusters of mentions, a mention a token span ``(start, end)``
(inclusive, counted over the document's tokens end to end). Key and response mentions need not
match (predicted mentions); nothing is added to or dropped from either side to make them match
(v8 scores twinless mentions as they are). The rules, as v8.01 applies them:

- MUC (Vilain et al. 1995): recall = sum over key entities K of (|K| - |p(K)|) / sum (|K| - 1),
  p(K) the partition of K by the response entities (a key mention the response lacks is a part
  of its own); precision the other way round. Singletons add nothing to either side.
- B-cubed: recall = sum_K sum_R |K ∩ R|^2 / |K| over sum_K |K|; precision = sum_R sum_K
  |K ∩ R|^2 / |R| over sum_R |R|. Singletons count; a twinless mention adds to its side's
  denominator only.
- CEAF-e: phi4(K, R) = 2 |K ∩ R| / (|K| + |R|); the one-to-one alignment of a document's key and
  response entities that maximises the sum of phi4 (Kuhn-Munkres, per document); recall = that
  sum / number of key entities, precision = / number of response entities.
- A document's numerators and denominators are summed over all documents before dividing
  (micro-average, the scorer's totals); F1 = 2PR / (P + R), 0 when P + R = 0 (and P or R is 0
  when its denominator is); all figures in percent. CoNLL F1 = the mean of the three F1s.
- Mention identification (reported too): exact spans; distinct key spans, distinct response
  spans, and the spans in both.
- Repeated mentions: a response span that is also a key span and occurs again in the response
  (in the same or another entity) is kept where it occurs first (entities in order, mentions in
  order) and removed elsewhere; an entity left empty is dropped. A repeated response span that
  is not in the key is kept every time (and counted every time), as v8.01 keeps it. A span
  repeated in the key stays in every key entity that has it; it belongs to the last of them
  when a response mention is placed (MUC's and B-cubed's key entity of a mention).
  ``score_files`` refuses a response with more than 10 removed repeats, as scorer.pl does.

Files (``read_conll``, blocks and rows by ``elmo_experiments.data.readers.conll2012``):
``#begin document <name>`` ... ``#end document``, one line per token, blank lines between
sentences; the coreference cell is the last nonempty column (LitBank's empty last column reads
as its ``_``): ``-`` or ``_`` (nothing), or ``(7`` (opens a mention of entity 7), ``7)``
(closes the latest open one of 7) and ``(7)`` (a one-token mention), several joined by ``|``
(or not). As scorer.pl reads a cell: all its ``(N)`` first, then its ``(N``, then its ``N)``,
whatever order they are written in, each ``N)`` closing the latest open ``(N``. So two
mentions of one entity that cross or touch, (0, 3) and (2, 5) or (0, 3) and (3, 5), read as
(2, 3) or (3, 3) and (0, 5): the format cannot say otherwise. Entities are ordered by the first
occurrence of their number, mentions by their closing. ``ConllCoref.compute`` scores the
clusters as they read back from what ``write`` writes, so it agrees with ``score_files`` on
them.

Where this is stricter than scorer.pl: a cell of anything else, a mention that never closes or
closes unopened, a token line outside a document, a document twice in a file, and key and
response files without the same documents (``#begin document`` names, parts included) and token
counts are ``DataError``s naming the file and line (scorer.pl scores a missing response
document as empty, ignores extra ones and counts no tokens). scorer.pl splits lines on tabs
only, so on a space-separated file it searches the whole line for ``(N`` etc.; here the last
column is read, and ``write`` writes tabs. scorer.pl removes at most 10 repeated mentions in a
run (``all`` counts each metric's removals again); ``score_files`` refuses the 11th, as a
single-metric run does.

Arithmetic is scorer.pl's: doubles, B-cubed summed mention by mention and CEAF-e's
``1 - (1 - phi4)`` key entity by key entity in its order, documents in file order (scorer.pl
adds documents in Perl's hash order, which changes from run to run, so its totals can differ in
the last bit, and a percentage truncated at an exact boundary by 0.01). ``format_report`` prints
numbers as scorer.pl prints them (15 significant digits; percentages truncated to two decimals).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from elmo_experiments.config.registry import register
from elmo_experiments.data.files import atomic_write, resolve_data_path
from elmo_experiments.data.readers.conll2012 import iter_parts
from elmo_experiments.errors import DataError
from elmo_experiments.metrics.metric import State, Unit, total

Span = tuple[int, int]
Clusters = Sequence[Sequence[Span]]
Counts = tuple[float, int, float, int]  # recall num, recall den, precision num, den

MAX_REPEATED = 10  # scorer.pl v8.01 refuses a response with more removed repeats than this
METRICS = (("muc", "muc"), ("b3", "bcub"), ("ceafe", "ceafe"))  # ours, scorer.pl's name
FILLERS = 7  # the '-' columns between the word and the coreference column (12 columns in all)
RULE = "-" * 74
_CELL = re.compile(r"(?:\([0-9]+\)|\([0-9]+|[0-9]+\)|\|)+")
_PIECES = (re.compile(r"\(([0-9]+)\)"), re.compile(r"\(([0-9]+)"), re.compile(r"([0-9]+)\)"))


# --- the scorer's view of a document -----------------------------------------------------------

@dataclass
class _Document:
    """Key entities (nonempty, repeats kept), each key span's last key entity, the key entities'
    span sets, and the response entities with repeated key spans removed."""

    key: list[list[Span]]
    owner: dict[Span, int]
    key_sets: list[frozenset[Span]]
    response: list[list[Span]]
    removed: list[tuple[int, int]]  # (entity, mention) of each removed repeat, as given


def _spans(clusters: Clusters) -> list[list[Span]]:
    return [[(int(start), int(end)) for start, end in cluster] for cluster in clusters]


def remove_repeated(key: Clusters, response: Clusters
                    ) -> tuple[list[list[Span]], list[tuple[int, int]]]:
    """The response as v8.01 scores it: a span of the key that occurs again in the response is
    removed there (the first occurrence stays); entities left empty are dropped. Also the
    (entity, mention) positions removed. Repeated spans the key lacks are kept."""
    key_spans = {span for cluster in _spans(key) for span in cluster}
    seen: set[Span] = set()
    kept: list[list[Span]] = []
    removed: list[tuple[int, int]] = []
    for number, cluster in enumerate(_spans(response)):
        entity = []
        for position, span in enumerate(cluster):
            if span in seen:
                removed.append((number, position))
                continue
            if span in key_spans:
                seen.add(span)
            entity.append(span)
        if entity:
            kept.append(entity)
    return kept, removed


def _document(key: Clusters, response: Clusters) -> _Document:
    entities = [cluster for cluster in _spans(key) if cluster]
    owner = {span: number for number, cluster in enumerate(entities) for span in cluster}
    kept, removed = remove_repeated(entities, response)
    return _Document(entities, owner, [frozenset(cluster) for cluster in entities], kept,
                     removed)


def _groups(document: _Document, entity: list[Span]) -> Counter[int]:
    """How many of a response entity's mentions each key entity owns."""
    return Counter(document.owner[span] for span in entity if span in document.owner)


# --- the metrics -------------------------------------------------------------------------------

def _muc(document: _Document) -> Counts:
    correct = sum(count - 1 for entity in document.response
                  for count in _groups(document, entity).values())
    key_links = sum(len(entity) - 1 for entity in document.key)
    response_links = sum(len(entity) - 1 for entity in document.response)
    return correct, key_links, correct, response_links


def _b_cubed(document: _Document) -> Counts:
    """Summed per response mention, in order, as scorer.pl sums them (doubles)."""
    recall = precision = 0.0
    for entity in document.response:
        common: dict[int, int] = {}
        for span in entity:
            owner = document.owner.get(span)
            if owner is None:  # twinless: nothing in common with any key entity
                continue
            if owner not in common:
                common[owner] = sum(other in document.key_sets[owner] for other in entity)
            precision += common[owner] / len(entity)
            recall += common[owner] / len(document.key[owner])
    return (recall, sum(map(len, document.key)), precision,
            sum(map(len, document.response)))


def phi4(key_entity: Sequence[Span], response_entity: Sequence[Span]) -> float:
    """CEAF-e's similarity 2 |K ∩ R| / (|K| + |R|); a span repeated in K counts each time."""
    size = len(key_entity) + len(response_entity)
    if size == 0:
        return 0.0
    inside = set(response_entity)
    return 2 * sum(span in inside for span in key_entity) / size


def _hungarian(cost: np.ndarray) -> list[tuple[int, int]]:
    """(row, column) pairs of a one-to-one assignment of every row that minimises the total
    cost (rows <= columns): Kuhn-Munkres with potentials, shortest augmenting paths."""
    rows, columns = cost.shape
    table = np.zeros((rows + 1, columns + 1))
    table[1:, 1:] = cost
    u, v = np.zeros(rows + 1), np.zeros(columns + 1)
    match = np.zeros(columns + 1, dtype=np.int64)  # column -> row (1-based, 0: free)
    way = np.zeros(columns + 1, dtype=np.int64)
    for row in range(1, rows + 1):
        match[0] = row
        column = 0
        least = np.full(columns + 1, np.inf)
        used = np.zeros(columns + 1, dtype=bool)
        while True:
            used[column] = True
            current_row = match[column]
            reduced = table[current_row] - u[current_row] - v
            better = ~used & (reduced < least)
            least[better] = reduced[better]
            way[better] = column
            candidates = np.where(used, np.inf, least)
            following = int(np.argmin(candidates))
            delta = candidates[following]
            u[match[used]] += delta
            v[used] -= delta
            least[~used] -= delta
            column = following
            if match[column] == 0:
                break
        while column:
            previous = way[column]
            match[column] = match[previous]
            column = previous
    return [(int(match[column]) - 1, column - 1) for column in range(1, columns + 1)
            if match[column]]


def align(similarity: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """A one-to-one alignment of rows to columns with the largest total similarity (pairs of
    zero similarity may be left out)."""
    matrix = np.asarray(similarity, dtype=float)
    if matrix.size == 0:
        return []
    if matrix.shape[0] > matrix.shape[1]:
        return [(row, column) for column, row in _hungarian(-matrix.T)]
    return _hungarian(-matrix)


def _components(pairs: Iterable[tuple[int, int]]) -> list[tuple[list[int], list[int]]]:
    """The connected components (key entities, response entities) of the overlap graph."""
    parent: dict[tuple[int, int], tuple[int, int]] = {}

    def root(node: tuple[int, int]) -> tuple[int, int]:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for key, response in pairs:
        parent[root((0, key))] = root((1, response))
    groups: dict[tuple[int, int], tuple[list[int], list[int]]] = {}
    for node in sorted(parent):
        groups.setdefault(root(node), ([], []))[node[0]].append(node[1])
    return list(groups.values())


def _ceaf_e(document: _Document) -> Counts:
    """The best alignment's phi4 summed over the key entities in order, as scorer.pl sums
    ``1 - (1 - phi4)`` (doubles); entities that overlap nothing add 0."""
    where = {span: number for number, entity in enumerate(document.response)
             for span in entity if span in document.owner}
    overlaps = {(key, where[span]) for key, entity in enumerate(document.key)
                for span in entity if span in where}
    aligned = [0.0] * len(document.key)
    for keys, responses in _components(overlaps):
        similarity = [[phi4(document.key[k], document.response[r]) for r in responses]
                      for k in keys]
        if len(keys) == 1:
            aligned[keys[0]] = max(similarity[0])
        elif len(responses) == 1:
            best = max(range(len(keys)), key=lambda row: similarity[row][0])
            aligned[keys[best]] = similarity[best][0]
        else:
            for row, column in align(similarity):
                aligned[keys[row]] = similarity[row][column]
    total = 0.0
    for value in aligned:
        total += 1 - (1 - value)
    return total, len(document.key), total, len(document.response)


def _mentions(document: _Document) -> Counts:
    key = {span for entity in document.key for span in entity}
    response = {span for entity in document.response for span in entity}
    found = len(key & response)
    return found, len(key), found, len(response)


def muc(key: Clusters, response: Clusters) -> Counts:
    """MUC's (recall numerator, recall denominator, precision numerator, precision denominator)
    for one document."""
    return _muc(_document(key, response))


def b_cubed(key: Clusters, response: Clusters) -> Counts:
    """B-cubed's (recall num, recall den, precision num, precision den) for one document."""
    return _b_cubed(_document(key, response))


def ceaf_e(key: Clusters, response: Clusters) -> Counts:
    """CEAF-e's (recall num, recall den, precision num, precision den) for one document."""
    return _ceaf_e(_document(key, response))


def mention_identification(key: Clusters, response: Clusters) -> Counts:
    """Exact-span mention identification's counts for one document."""
    return _mentions(_document(key, response))


_SCORERS = {"muc": _muc, "b3": _b_cubed, "ceafe": _ceaf_e, "mentions": _mentions}


def figures(counts: Counts) -> dict[str, float]:
    """Recall, precision and F1 in percent from summed counts (as scorer.pl's doubles), with
    the counts."""
    recall_num, recall_den, precision_num, precision_den = counts
    recall = recall_num / recall_den if recall_den else 0.0
    precision = precision_num / precision_den if precision_den else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"recall": 100 * recall, "precision": 100 * precision, "f1": 100 * f1,
            "recall_numerator": recall_num, "recall_denominator": recall_den,
            "precision_numerator": precision_num, "precision_denominator": precision_den}


_PARTS = ("recall_numerator", "recall_denominator", "precision_numerator",
          "precision_denominator")


def document_state(key: Clusters, response: Clusters) -> State:
    """One document's counts, scorer by scorer (``muc``, ``b3``, ``ceafe``, ``mentions``: each
    ``{recall_numerator: .., ..}``), and ``repeated_mentions`` (response repeats removed)."""
    document = _document(key, response)
    state: State = {name: dict(zip(_PARTS, scorer(document), strict=True))
                    for name, scorer in _SCORERS.items()}
    state["repeated_mentions"] = len(document.removed)
    return state


def state_figures(state: State) -> dict[str, Any]:
    """``muc``, ``b3``, ``ceafe`` and ``mentions`` (each ``figures``) and ``conll_f1`` (the
    mean of the three F1s) from summed ``document_state``s."""
    result: dict[str, Any] = {}
    for name in _SCORERS:
        parts = state.get(name, {})
        recall_num, recall_den, precision_num, precision_den = (parts.get(p, 0) for p in _PARTS)
        result[name] = figures((recall_num, int(recall_den), precision_num, int(precision_den)))
    result["conll_f1"] = sum(result[name]["f1"] for name, _ in METRICS) / len(METRICS)
    return result


def score_documents(keys: Sequence[Clusters], responses: Sequence[Clusters]) -> dict[str, Any]:
    """The scorer's totals over documents (pairs of key and response clusters, summed in this
    order): ``state_figures``, ``documents`` and ``repeated_mentions``."""
    if len(keys) != len(responses):
        raise ValueError(f"{len(keys)} key documents but {len(responses)} responses")
    state = total((str(number), document_state(key, response))
                  for number, (key, response) in enumerate(zip(keys, responses, strict=True)))
    return {**state_figures(state), "documents": len(keys),
            "repeated_mentions": state.get("repeated_mentions", 0)}


# --- files -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CorefDocument:
    """One ``#begin document`` block: ``name`` is the rest of that line (e.g. ``(doc); part 0``),
    ``entities`` its mentions as the scorer orders them, ``lines`` each mention's closing line,
    ``tokens`` its token count; ``source`` and ``line`` (the begin line) name it in errors."""

    name: str
    entities: tuple[tuple[Span, ...], ...]
    lines: tuple[tuple[int, ...], ...]
    tokens: int
    source: str = "<conll>"
    line: int = 1


def _cell_parts(cell: str) -> list[list[str]]:
    """A cell's (one-token, opening, closing) entity numbers as scorer.pl takes them out: all
    ``(N)`` first, then ``(N``, then ``N)``, each leftmost first (``|`` or not between them)."""
    parts = []
    for pattern in _PIECES:
        found = []
        while (match := pattern.search(cell)) is not None:
            found.append(match.group(1))
            cell = cell[:match.start()] + cell[match.end():]
        parts.append(found)
    return parts


def parse_column(cells: Sequence[str], lines: Sequence[int], source: str = "<conll>"
                 ) -> tuple[list[list[Span]], list[list[int]]]:
    """A document's entities from its coreference cells (one per token, ``lines`` their line
    numbers), read as scorer.pl reads them, and each mention's closing line."""
    numbers: dict[str, int] = {}
    entities: list[list[Span]] = []
    closing: list[list[int]] = []
    open_: dict[str, list[tuple[int, int]]] = {}

    def entity(number: str) -> int:
        if number not in numbers:
            numbers[number] = len(entities)
            entities.append([])
            closing.append([])
        return numbers[number]

    for token, (cell, line) in enumerate(zip(cells, lines, strict=True)):
        if cell in ("-", "_"):
            continue
        if _CELL.fullmatch(cell) is None:
            raise DataError(f"{source}:{line}: coreference column {cell!r} is none of (N, N), "
                            f"(N), - or several of them")
        singles, opens, closes = _cell_parts(cell)
        for number in singles:
            index = entity(number)
            entities[index].append((token, token))
            closing[index].append(line)
        for number in opens:
            entity(number)
            open_.setdefault(number, []).append((token, line))
        for number in closes:
            if not open_.get(number):
                raise DataError(f"{source}:{line}: '{number})' closes a mention of entity "
                                f"{number}, but none is open")
            start, _ = open_[number].pop()
            index = numbers[number]
            entities[index].append((start, token))
            closing[index].append(line)
    for number, starts in open_.items():
        if starts:
            raise DataError(f"{source}:{starts[0][1]}: the mention of entity {number} opened "
                            f"here is never closed")
    return entities, closing


def _cell(fields: list[str]) -> str:
    """A row's coreference cell: its last column that is not empty (scorer.pl's, whose split
    on tabs drops trailing empty columns: LitBank's empty last column reads as its ``_``)."""
    return next((field.strip() for field in reversed(fields) if field.strip()), "-")


def read_conll(path: str | Path) -> list[CorefDocument]:
    """The documents of a CoNLL-2012 file (``.gz`` too), coreference from its last column. A
    malformed column or block, or a document twice, is a one-line ``DataError`` naming the file
    and line."""
    resolved = resolve_data_path(path)
    source = str(resolved)
    documents: list[CorefDocument] = []
    first_line: dict[str, int] = {}
    for part in iter_parts(resolved, min_columns=1, tabs=True):
        if part.header in first_line:
            raise DataError(f"{source}:{part.begin_line}: document {part.header!r} again "
                            f"(first at line {first_line[part.header]})")
        first_line[part.header] = part.begin_line
        rows = [row for sentence in part.sentences for row in sentence]
        entities, closing = parse_column([_cell(fields) for _, fields in rows],
                                         [number for number, _ in rows], source)
        documents.append(CorefDocument(part.header, tuple(map(tuple, entities)),
                                       tuple(map(tuple, closing)), len(rows), source,
                                       part.begin_line))
    return documents


def _check_documents(keys: Sequence[CorefDocument], responses: Sequence[CorefDocument],
                     key_file: str, response_file: str) -> list[CorefDocument]:
    """The response documents in the key's order; they must be the key's, with its tokens."""
    by_name = {document.name: document for document in responses}
    key_names = {document.name for document in keys}
    for response in responses:
        if response.name not in key_names:
            raise DataError(f"{response.source}:{response.line}: document {response.name!r} "
                            f"is not in {key_file}")
    ordered = []
    for key in keys:
        response = by_name.get(key.name)
        if response is None:
            raise DataError(f"{key.source}:{key.line}: document {key.name!r} is not in "
                            f"{response_file}")
        if response.tokens != key.tokens:
            raise DataError(f"{response.source}:{response.line}: document {key.name!r} has "
                            f"{response.tokens} tokens, but {key.source}:{key.line} has "
                            f"{key.tokens}")
        ordered.append(response)
    return ordered


def score_files(key_path: str | Path, response_path: str | Path) -> dict[str, Any]:
    """``score_documents`` of a CoNLL-2012 response file against a key file; more than 10
    removed repeated mentions is a ``DataError``, as scorer.pl refuses to score them."""
    key_file, response_file = (str(resolve_data_path(p)) for p in (key_path, response_path))
    keys = read_conll(key_file)
    if not keys:
        raise DataError(f"{key_file}: no documents (no '#begin document' line)")
    responses = _check_documents(keys, read_conll(response_file), key_file, response_file)
    repeated = 0
    for key, response in zip(keys, responses, strict=True):
        for entity, position in remove_repeated(key.entities, response.entities)[1]:
            repeated += 1
            if repeated > MAX_REPEATED:
                start, end = response.entities[entity][position]
                raise DataError(f"{response.source}:{response.lines[entity][position]}: "
                                f"repeated mention number {repeated} ({start}, {end}); "
                                f"scorer.pl v8.01 refuses to score more than {MAX_REPEATED}")
    return score_documents([key.entities for key in keys],
                           [response.entities for response in responses])


def _perl(value: float) -> str:
    """A number as Perl prints it (15 significant digits)."""
    return f"{value:.15g}"


def _rpf_line(values: dict[str, float]) -> str:
    """scorer.pl's ShowRPF: counts, then percentages truncated to two decimals."""
    recall_den, precision_den = values["recall_denominator"], values["precision_denominator"]
    recall = values["recall_numerator"] / recall_den if recall_den else 0.0
    precision = values["precision_numerator"] / precision_den if precision_den else 0.0
    f1 = 2 * precision * recall / (precision + recall) if recall + precision else 0.0
    return (f"Recall: ({_perl(values['recall_numerator'])} / {_perl(recall_den)}) "
            f"{_perl(int(recall * 10000) / 100)}%\t"
            f"Precision: ({_perl(values['precision_numerator'])} / {_perl(precision_den)}) "
            f"{_perl(int(precision * 10000) / 100)}%\t"
            f"F1: {_perl(int(f1 * 10000) / 100)}%")


def format_report(result: dict[str, Any]) -> str:
    """Per metric the totals ``scorer.pl <metric> KEY RESPONSE none`` prints (as under its
    ``all``), then the CoNLL F1 (the mean of the three F1s, not of the truncated figures)."""
    lines = []
    if result.get("repeated_mentions"):
        lines.append(f"Repeated mentions in the response, removed as scorer.pl removes them: "
                     f"{result['repeated_mentions']}")
    for ours, theirs in METRICS:
        lines += ["", f"METRIC {theirs}:", "", "====== TOTALS =======",
                  f"Identification of Mentions: {_rpf_line(result['mentions'])}", RULE,
                  f"Coreference: {_rpf_line(result[ours])}", RULE]
    lines += ["", f"CoNLL F1 (mean of the MUC, B-cubed and CEAF-e F1): "
                  f"{result['conll_f1']:.2f}%"]
    return "\n".join(lines).lstrip("\n") + "\n"


# --- writing, and the dataset metric -----------------------------------------------------------

def format_column(clusters: Clusters, tokens: int) -> list[str]:
    """The coreference cells of a document of ``tokens`` tokens, entity ``i`` numbered ``i``:
    openings (outer first), one-token mentions, then closings (inner first)."""
    parts: list[list[tuple[int, int, str]]] = [[] for _ in range(tokens)]
    for number, cluster in enumerate(_spans(clusters)):
        for start, end in cluster:
            if start == end:
                parts[start].append((1, 0, f"({number})"))
            else:
                parts[start].append((0, -end, f"({number}"))
                parts[end].append((2, -start, f"{number})"))
    return ["|".join(text for *_, text in sorted(cell)) if cell else "-" for cell in parts]


def _field(value: Any) -> str:
    return "_".join(str(value).split()) or "_"


def format_document(name: str, sentences: Sequence[Sequence[Any]], cells: Sequence[str],
                    document_id: Any, part: Any) -> str:
    """A ``#begin document`` block: per token ``document_id part index word``, ``-`` fillers
    and the coreference cell, tab-separated; a blank line after each sentence."""
    rows = [f"#begin document {name}"]
    token = 0
    for sentence in sentences:
        for index, word in enumerate(sentence):
            rows.append("\t".join([_field(document_id), _field(part), str(index), _field(word),
                                   *["-"] * FILLERS, cells[token]]))
            token += 1
        rows.append("")
    rows.append("#end document")
    return "\n".join(rows) + "\n"


def _meta(instance: dict[str, Any], key: str) -> Any:
    """A metadata value, whether a field of its own or under ``metadata``."""
    if key in instance:
        return instance[key]
    return instance["metadata"][key]


def _header(document_id: Any, part: Any, window: dict[str, Any] | None) -> str:
    """``(<document_id>); part <part>``; a window of a part adds ``, window <index>`` to the
    name, and a part of None is left out."""
    name = f"{document_id}, window {window['index']}" if window else f"{document_id}"
    header = f"({name})" if part is None else f"({name}); part {part}"
    return " ".join(header.split())


def _checked(clusters: Any, tokens: int, what: str) -> list[list[Span]]:
    spans = []
    for cluster in clusters:
        entity = []
        for mention in cluster:
            if len(mention) != 2:
                raise ValueError(f"{what}: mention {mention!r} is not [start, end]")
            start, end = int(mention[0]), int(mention[1])
            if not 0 <= start <= end < tokens:
                raise ValueError(f"{what}: mention [{start}, {end}] is outside the document's "
                                 f"{tokens} tokens (or ends before it starts)")
            entity.append((start, end))
        spans.append(entity)
    return spans


@dataclass(frozen=True)
class _Written:
    name: str
    document_id: Any
    part: Any
    sentences: list[list[Any]]
    key_cells: list[str]
    response_cells: list[str]


def _as_read(cells: list[str]) -> list[list[Span]]:
    return parse_column(cells, range(1, len(cells) + 1), "<written>")[0]


class ConllCoref:
    """The CoNLL-2012 scorer's figures over an evaluation pass, in percent: ``muc_*``, ``b3_*``,
    ``ceafe_*``, ``mention_*`` (precision, recall, f1) and ``coref_*`` (their CoNLL means;
    ``coref_f1`` is the CoNLL F1). One instance per document part: ``clusters`` (gold, lists of
    ``[start, end]`` inclusive over the tokens end to end), ``document`` (sentences of tokens),
    ``document_id`` and ``part``; one prediction each with its ``clusters``. ``write`` writes
    the response file at ``path`` and the key at ``path + '.key'``; ``compute`` scores the
    clusters as they read back from them (see the module's notes)."""

    names = ("muc_precision", "muc_recall", "muc_f1", "b3_precision", "b3_recall", "b3_f1",
             "ceafe_precision", "ceafe_recall", "ceafe_f1", "mention_precision",
             "mention_recall", "mention_f1", "coref_precision", "coref_recall", "coref_f1")
    primary = "coref_f1"
    unit = "document"

    def documents(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]]
                  ) -> list[_Written]:
        """Every instance's block, in input order; ``(document_id, part)`` must be unique."""
        written: list[_Written] = []
        seen: dict[str, int] = {}
        for number, (instance, record) in enumerate(zip(instances, predictions, strict=True)):
            document_id = _meta(instance, "document_id")
            part = _meta(instance, "part")
            name = _header(document_id, part, instance.get("window") or
                           instance.get("metadata", {}).get("window"))
            if name in seen:
                raise ValueError(f"instances {seen[name]} and {number}: the same document "
                                 f"{name!r}")
            seen[name] = number
            sentences = [list(sentence) for sentence in _meta(instance, "document")]
            tokens = sum(map(len, sentences))
            cells = []
            for clusters, side in ((instance["clusters"], "gold"), (record["clusters"],
                                                                     "predicted")):
                spans = _checked(clusters, tokens, f"document {name}, {side} clusters")
                cells.append(format_column(spans, tokens))
            written.append(_Written(name, document_id, part, sentences, *cells))
        return written

    def units(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]]
              ) -> list[Unit]:
        """One unit per document (``document_id``; its parts and windows add up): the counts
        of its clusters as they read back from the written files."""
        return [(str(d.document_id), document_state(_as_read(d.key_cells),
                                                    _as_read(d.response_cells)))
                for d in self.documents(instances, predictions)]

    def from_state(self, state: State) -> dict[str, float]:
        result = state_figures(state)
        values: dict[str, float] = {}
        for ours, name in (("muc", "muc"), ("b3", "b3"), ("ceafe", "ceafe"),
                           ("mentions", "mention")):
            for figure in ("precision", "recall", "f1"):
                values[f"{name}_{figure}"] = result[ours][figure]
        for figure in ("precision", "recall"):
            values[f"coref_{figure}"] = sum(result[ours][figure] for ours, _ in METRICS) / 3
        values["coref_f1"] = result["conll_f1"]
        return values

    def compute(self, instances: list[dict[str, Any]],
                predictions: list[dict[str, Any]]) -> dict[str, float]:
        return self.from_state(total(self.units(instances, predictions)))

    def write(self, instances: list[dict[str, Any]], predictions: list[dict[str, Any]],
              path: str | Path) -> None:
        documents = self.documents(instances, predictions)
        for target, key in ((Path(path), False), (Path(f"{path}.key"), True)):
            text = "".join(format_document(d.name, d.sentences,
                                           d.key_cells if key else d.response_cells,
                                           d.document_id, d.part) for d in documents)
            atomic_write(target, lambda tmp, text=text: Path(tmp).write_text(text,
                                                                              encoding="utf-8"))


register("dataset_metric", "conll_coref")(ConllCoref)

