// The ELMo token embedder and its indexer (Peters et al. 2018, section 3; docs/paper.md).
// Weights: $ELMO_WEIGHTS (a directory with options.json + weights.hdf5, a shipped name, or a
// released name: small, medium, original, 5.5B), default 'gutenberg': the biLM that ships inside
// the package (no download; elmo_experiments/bilm/models/gutenberg/MODEL_CARD.md).
local env = std.native('env');
local weights = if env('ELMO_WEIGHTS') == '' then 'gutenberg' else env('ELMO_WEIGHTS');
{
  weights: weights,
  indexer: { type: 'elmo_characters' },
  // One mix per placement: [input] or [input, output].
  embedder(mixes=[{}], dropout=0.5, state='stateless'):: {
    type: 'elmo',
    weights: weights,
    mixes: mixes,
    dropout: dropout,
    state: state,
  },
  mix(l2=0.0, layer_norm=false, mode='learned'):: { mode: mode, l2: l2, layer_norm: layer_norm },
}
