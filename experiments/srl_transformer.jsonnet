// SRL with a pretrained transformer (MiniLM-L6, frozen, every layer mixed) in ELMo's place:
// experiments/srl.jsonnet with the same mixes and placements (experiments/lib/transformer.libsonnet).
//   pip install -e '.[transformer]'; elmo-exp train experiments/srl_transformer.jsonnet -s runs/srl_transformer
(import 'lib/transformer.libsonnet').instead_of_elmo(import 'srl.jsonnet')
