// Coreference with a pretrained transformer (MiniLM-L6, frozen, every layer mixed) in ELMo's
// place: experiments/coref.jsonnet with the same mix (experiments/lib/transformer.libsonnet).
//   pip install -e '.[transformer]'; elmo-exp train experiments/coref_transformer.jsonnet -s runs/coref_transformer
(import 'lib/transformer.libsonnet').instead_of_elmo(import 'coref.jsonnet')
