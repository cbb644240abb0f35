// Data locations: real data under $ELMO_DATA_DIR (layout: ner_conll2003/eng.train, ...), else the
// embedded samples in reproduction/*/sample/ (the run prints a loud notice and records which).
local root = std.native('env')('ELMO_DATA_DIR');
{
  root: root,
  // path('ner_conll2003/eng.train', 'reproduction/ner/sample/train.txt')
  path(real, sample):: if root == '' then std.native('project_path')(sample) else root + '/' + real,
}
