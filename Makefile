# elmo-experiments: `make demo` trains NER with ELMo on the embedded sample; `make test` runs the suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The CPU wheel of torch 2.13.0 (a local file on the project's machines); override if needed.
TORCH_SPEC ?= torch==2.13.0
# one test worker per core the process may use; every run lists its 40 slowest tests
PYTEST_FLAGS ?= -n auto --dist loadscope --durations=40

.PHONY: install test test-all lint demo tables clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e ".[dev]"
# WordNet 3.0 for `elmo-exp probe wsd` (Debian wordnet-base); without root the WSD tests skip
	-command -v apt-get >/dev/null && (dpkg -s wordnet-base >/dev/null 2>&1 || (apt-get update && apt-get install -y wordnet-base)) || echo "wordnet-base not installed: WSD probe tests will skip"
	touch $@

# the suite without the slow end-to-end checks, a worker per core (benchmarks/results/*/suite_test.txt: how long); CI runs test-all
test: install
	$(BIN)/python -m pytest $(PYTEST_FLAGS)

test-all: install
	$(BIN)/python -m pytest $(PYTEST_FLAGS) -m "slow or not slow"

lint: install
	$(BIN)/ruff check .

# The demo needs no download: it trains NER with ELMo from the biLM that ships inside the
# package (weights: 'gutenberg') on the embedded CoNLL-format sample.
demo: install
	$(BIN)/elmo-exp train experiments/ner.jsonnet -s runs/demo --force \
		-o data_loader.batch_size=4 -o trainer.num_epochs=20

tables: install  # the README's results block and each task README's, from results/
	$(BIN)/elmo-exp tables results --readme README.md --task-readmes \
		--figures results/figures > /dev/null

clean:
	rm -rf runs/demo .pytest_cache .ruff_cache
