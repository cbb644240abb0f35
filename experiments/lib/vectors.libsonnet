// The word embedding of every task: static word vectors when $ELMO_VECTORS_DIR names a folder
// holding gutenberg_<dim>d.txt (made by `elmo-exp vectors`, docs/framework.md, "Static word
// vectors": word2vec skip-gram on the biLM's own public-domain corpus, our stand-in for the
// paper's GloVe and Senna vectors),
// else trainable random vectors of the same size. The vectors are fine-tuned either way.
local dir = std.native('env')('ELMO_VECTORS_DIR');
{
  dir: dir,
  embedding(dim):: { type: 'embedding', embedding_dim: dim, trainable: true } + (
    if dir == '' then {} else { pretrained_file: dir + '/gutenberg_' + dim + 'd.txt' }
  ),
}
