#!/usr/bin/env bash
# The virtualenv that benchmarks/bench_allennlp.py runs in: allennlp 2.10.1 and allennlp-models
# 2.10.1 beside this project, on the project's CPU torch. Idempotent: run again, it adds nothing.
#   bash benchmarks/allennlp_env.sh          (ALLENNLP_VENV=DIR puts it elsewhere; default
#                                             .venv-allennlp, git-ignored)
# allennlp 2.10.1 pins torch<1.13 (and transformers<4.21, spacy<3.4), which have no builds for
# Python 3.11 here. So allennlp and allennlp-models go in with --no-deps, then only what they
# import to load the six task models (found one import error at a time), each pinned, under a
# constraint that keeps the torch already installed: nothing here can pull a CUDA build.
# Left out: torchvision (no build imports beside CPU torch 2.13; bench_allennlp.py puts an empty
# module in its place, for the image loader allennlp.data imports) and what allennlp lists but
# these models never import (wandb, sentencepiece, sacremoses, termcolor, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${ALLENNLP_VENV:-.venv-allennlp}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}  # as the Makefile: the CPU wheel on the project's machines
test -x "$VENV/bin/python" || python3 -m venv "$VENV"
PY=$VENV/bin/python
"$PY" -c "import torch" 2>/dev/null || "$PY" -m pip install --quiet "$TORCH_SPEC"
keep_torch=$(mktemp)
trap 'rm -f "$keep_torch"' EXIT
"$PY" -c "import torch; print('torch==' + torch.__version__.split('+')[0])" > "$keep_torch"
# (pip then lists the pins of allennlp it leaves unmet: expected, see above)
pip_install() { "$PY" -m pip install --quiet --constraint "$keep_torch" "$@"; }

# The two packages, and two of their dependencies whose own pins cannot be met here:
# cached-path 1.1 wants huggingface-hub<0.11 (transformers 4.46 needs >=0.23) and fairscale wants
# the old torch. Their imports are covered below.
pip_install --no-deps allennlp==2.10.1 allennlp-models==2.10.1 cached-path==1.1.6 \
    fairscale==0.4.6
# What importing allennlp_models.{tagging,classification,pair_classification,rc,
# structured_prediction,coref} needs. transformers 4.46.3: a 4.x that still has
# transformers.AdamW, which allennlp.training.optimizers registers when imported (4.51 has not).
# boto3, google-cloud-storage, rich: cached-path's import of its s3 and gs schemes.
pip_install transformers==4.46.3 spacy==3.8.18 boto3==1.44.18 google-cloud-storage==2.19.0 \
    rich==15.0.0 lmdb==3.0.0 dill==0.4.1 base58==2.1.1 more-itertools==11.2.1 h5py==3.16.0 \
    tensorboardX==2.6.5 nltk==3.10.4 scipy==1.17.1 scikit-learn==1.9.1 word2number==1.1 \
    conllu==6.0.0
# This project, for the benchmark's own side: its core dependencies other than the above.
pip_install jsonnet==0.22.0 click==8.5.1 numpy tqdm
"$PY" -m pip show --quiet elmo-experiments 2>/dev/null || pip_install --no-deps -e .

# The check: the benchmark's imports, the allennlp-models task packages among them.
"$PY" -c "import sys; sys.path.insert(0, 'benchmarks'); import bench_allennlp as b; \
print('allennlp', b.import_allennlp(), 'ready in $VENV')"
