// SNLI with a pretrained transformer (MiniLM-L6, frozen, every layer mixed) in ELMo's place:
// experiments/snli.jsonnet with the same mixes and placements (experiments/lib/transformer.libsonnet).
//   pip install -e '.[transformer]'; elmo-exp train experiments/snli_transformer.jsonnet -s runs/snli_transformer
(import 'lib/transformer.libsonnet').instead_of_elmo(import 'snli.jsonnet')
