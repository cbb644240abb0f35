// NER with a pretrained transformer (MiniLM-L6, frozen, every layer mixed) in ELMo's place:
// experiments/ner.jsonnet with the same mixes and placements (experiments/lib/transformer.libsonnet).
//   pip install -e '.[transformer]'; elmo-exp train experiments/ner_transformer.jsonnet -s runs/ner_transformer
(import 'lib/transformer.libsonnet').instead_of_elmo(import 'ner.jsonnet')
