// SST-5 with a pretrained transformer (MiniLM-L6, frozen, every layer mixed) in ELMo's place:
// experiments/sst5.jsonnet with the same mixes and placements (experiments/lib/transformer.libsonnet).
//   pip install -e '.[transformer]'; elmo-exp train experiments/sst5_transformer.jsonnet -s runs/sst5_transformer
(import 'lib/transformer.libsonnet').instead_of_elmo(import 'sst5.jsonnet')
