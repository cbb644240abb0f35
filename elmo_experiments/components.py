"""Imports every module that registers components, so the registry is complete.

Adding a component means adding its module here: the list is explicit on purpose. Components
from outside the package come from installed plugins (``elmo_experiments.plugins``), loaded last.
"""

from elmo_experiments.bilm import characters, elmo_embedder  # noqa: F401
from elmo_experiments.bilm.pretraining import lm_model  # noqa: F401
from elmo_experiments.data import token_indexers  # noqa: F401
from elmo_experiments.data.readers import column_tagging, conll2003, snli, sst  # noqa: F401
from elmo_experiments.data.readers import coref as coref_reader  # noqa: F401
from elmo_experiments.data.readers import squad as squad_reader  # noqa: F401
from elmo_experiments.data.readers import srl as srl_reader  # noqa: F401
from elmo_experiments.models import bcn, bidaf, coref, crf_tagger, esim, srl_tagger  # noqa: F401
from elmo_experiments.modules import alternating_lstm, encoders  # noqa: F401
from elmo_experiments.modules.embedders import char_cnn, transformer, word_embedding  # noqa: F401
from elmo_experiments.plugins import load_entry_points
from elmo_experiments.tasks import coref as coref_metric  # noqa: F401
from elmo_experiments.tasks import ner, squad, srl  # noqa: F401
from elmo_experiments.training import callbacks, optimizers  # noqa: F401

load_entry_points()
