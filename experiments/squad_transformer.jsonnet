// SQuAD with a pretrained transformer (MiniLM-L6, frozen, every layer mixed) in ELMo's place:
// experiments/squad.jsonnet with the same mixes and placements (experiments/lib/transformer.libsonnet).
//   pip install -e '.[transformer]'; elmo-exp train experiments/squad_transformer.jsonnet -s runs/squad_transformer
(import 'lib/transformer.libsonnet').instead_of_elmo(import 'squad.jsonnet')
