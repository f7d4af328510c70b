# Two commands do all the set-up on a fresh machine with Python 3.11.2-3.13 and pip:
#   make book   build the HTML book into _build/html (warnings are errors)
#   make test   package tests, nbval over every chapter, the assignments, the PDF, the book
#               build and the browser tests, then a table of the time each part took
# Linux without a GPU: add TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu to either
# command to install torch's CPU build instead of the default (CUDA) one.
PYTHON ?= $(shell command -v python3.11 || command -v python3.12 || command -v python3.13 \
                  || command -v python3)
TORCH_INDEX_URL ?=
PIP_INDEX := $(if $(TORCH_INDEX_URL),--extra-index-url $(TORCH_INDEX_URL))
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NBVAL  := --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout 180
# Two numerics unlike the native AVX-512 ones that stored the outputs (make run-chapter), so that
# an output that depends on rounding fails here too, not only on a reader's CPU (CONTRIBUTING.md:
# two kinds of output).
# - AVX2: torch, MKL and oneDNN take the kernels of a CPU without AVX-512 (most laptops). Every
#   float32 reduction and matrix product rounds differently, and it costs nothing: nbval runs
#   the chapters under it.
# - PERTURBED: torch's scalar kernels and MKL's compatible path, further from both; 3 to 6 times
#   slower, so it is for the bench studies (make study-perturbed), whose claims must hold under
#   both the native and these numerics.
AVX2      := ATEN_CPU_CAPABILITY=avx2 MKL_CBWR=AVX2 DNNL_MAX_CPU_ISA=AVX2
PERTURBED := ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE

.PHONY: book pdf test test-deep test-package test-notebooks test-browser browser-deps run-chapter lab clean \
        study-perturbed study-avx2

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) tools/check_python.py
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check $(PIP_INDEX) \
	  -r requirements.txt
	@touch $@

book: $(STAMP)
	$(TIMED) book -- $(BIN)/jupyter-book build . -W -n --keep-going
	@echo "The book is in _build/html: open _build/html/index.html in a browser."

# Every part of the suite, one after the other; the package tests and nbval on all cores
# (TEST_JOBS workers, 2 by default; TEST_JOBS=1: one process), the assignments in two worker
# processes of their own. The table of every part's
# wall-clock and CPU seconds is printed at the end, pass or fail (tools/test_times.py);
# make test-times prints it again.
TEST_JOBS ?= 2
XDIST := $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS))
TIMED = $(BIN)/python tools/test_times.py run
TEST_PARTS := test-package test-notebooks test-assignments pdf book test-browser

test: $(STAMP)
	@$(BIN)/python tools/test_times.py clear
	@status=0; for part in $(TEST_PARTS); do \
	  $(MAKE) --no-print-directory $$part || { status=$$?; break; }; \
	done; \
	echo; $(BIN)/python tools/test_times.py report; exit $$status

.PHONY: test-times
test-times:
	@$(PYTHON) tools/test_times.py report

# The whole book as one PDF, _build/pdf/sequence-learning-executed.pdf (3 to 6 minutes):
# the single-page build printed by headless Chromium (tools/book_pdf.py). A `make book`
# after it puts the PDF in the download menu (_ext/downloads.py), as the workflow does.
# The single-page build reads the sources into the HTML build's doctrees (_build/.doctrees,
# as Sphinx's builders share them), so whichever of make pdf and make book runs second
# reads nothing again.
pdf: $(STAMP) browser-deps
	rm -rf _build/pdf
	mkdir -p _build/pdf/_build _build/.doctrees
	ln -s ../../.doctrees _build/pdf/_build/.doctrees
	$(TIMED) pdf -- sh -c '$(BIN)/jupyter-book build . -W -n --keep-going --builder singlehtml \
	  --path-output _build/pdf && $(BIN)/python tools/book_pdf.py \
	  _build/pdf/_build/singlehtml _build/pdf/sequence-learning-executed.pdf'

test-package: $(STAMP)
	$(TIMED) test-package -- env $(if $(XDIST),OMP_NUM_THREADS=1) $(BIN)/python -m pytest \
	  $(XDIST) tests/package \
	  tests/test_notebook_hygiene.py tests/test_portable_markdown.py tests/test_appendix.py \
	  tests/test_part_notation.py tests/test_erratum_quotes.py tests/test_chapter_shape.py \
	  tests/test_citations.py tests/test_front_matter.py tests/test_font_subset.py -q

# 20 times the property-test examples of `make test` (tests/package/conftest.py)
test-deep: $(STAMP)
	SEQLEARN_HYPOTHESIS_PROFILE=deep $(BIN)/python -m pytest tests/package -q

# One notebook per worker (--dist loadfile): a notebook's cells run in order in one kernel.
test-notebooks: $(STAMP)
	$(TIMED) test-notebooks -- env $(AVX2) $(BIN)/python -m pytest $(NBVAL) \
	  $(XDIST) $(if $(XDIST),--dist loadfile) chapters appendix -q

# A bench study under the perturbed numerics:  make study-perturbed STUDY=bench/study_ntm.py
study-perturbed: $(STAMP)
	env $(PERTURBED) $(BIN)/python $(STUDY) $(ARGS)

# ... and under the AVX2 numerics of make test-notebooks:  make study-avx2 STUDY=...
study-avx2: $(STAMP)
	env $(AVX2) $(BIN)/python $(STUDY) $(ARGS)

# In one process: beside a second Chromium, JupyterLab took over 120 s to render a chapter that
# it renders in 22 s alone, and the part took no less time.
test-browser: $(STAMP) browser-deps
	$(TIMED) test-browser -- $(BIN)/python -m pytest tests/book -q

# Debian's chromium and chromedriver drive the browser test (no browser is downloaded by a test tool);
# poppler-utils and qpdf read, render and compress the book's PDF (make pdf, tests/book/test_downloads.py).
browser-deps:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null \
	    || ! command -v pdftoppm >/dev/null || ! command -v qpdf >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver poppler-utils qpdf; \
	  else \
	    echo "The browser test needs Debian's chromium, chromium-driver, poppler-utils and qpdf: sudo apt-get install chromium chromium-driver poppler-utils qpdf"; exit 1; \
	  fi; \
	fi

# Graded assignments (otter-grader; the guide is assignments/pages/guide.md): the
# student and the autograder version of every master notebook, in
# _build/assignments/NAME/{student,autograder}. otter assign also grades each solution
# notebook with all its tests (OTTER_ASSIGN=--no-run-tests only generates).
# The grading plugin (tools/grading: sandboxed, tamper-proof grading) is installed into
# .venv in editable mode; otter assign and otter run load it from there. The wheels of
# seqlearn and of the plugin go into every autograder zip, for the grading image of
# otter grade (Docker) and Gradescope (tools/grading/wheels.py).
.PHONY: assignments test-assignments
ASSIGNMENTS := $(patsubst assignments/%.ipynb,_build/assignments/%,\
                 $(wildcard assignments/*.ipynb))
OTTER_ASSIGN ?=
GRADING := $(VENV)/.grading-installed
GRADING_SOURCES := tools/grading/pyproject.toml \
                   $(wildcard tools/grading/seqlearn_grading/*.py)
WHEELS := _build/wheels/.built

assignments: $(ASSIGNMENTS)

$(GRADING): tools/grading/pyproject.toml $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps \
	  --no-build-isolation -e tools/grading
	@touch $@

$(WHEELS): pyproject.toml README.md $(wildcard seqlearn/*.py seqlearn/*/*.py) \
           $(GRADING_SOURCES) tools/grading/wheels.py $(STAMP)
	$(BIN)/python tools/grading/wheels.py build $(@D)
	@touch $@

_build/assignments/%: assignments/%.ipynb assignments/checks.py \
                      assignments/requirements.txt $(GRADING_SOURCES) $(GRADING) \
                      $(WHEELS)
	rm -rf $@
	$(BIN)/otter assign $(OTTER_ASSIGN) $< $@ || { rm -rf $@; exit 1; }
	$(BIN)/python tools/grading/wheels.py ship $(dir $(WHEELS)) $@/autograder \
	  || { rm -rf $@; exit 1; }

# Every assignment generated, a gallery of submissions (correct, buggy, tampering,
# crashing) graded with otter run (no Docker), each question scoring what it deserves,
# the student version run top to bottom, the guide's commands run as written, and the
# wheels that the autograder zips ship
test-assignments: $(GRADING)
	$(TIMED) test-assignments -- $(BIN)/python -m pytest tests/assignments -q

# Mutation testing (tools/mutation.py; not in `make test`: about five hours on 2 cores with the
# default samples).
# The package tests against mutants of the model modules, then each of the fourteen chapters
# under nbval against mutants of the functions it teaches (mutants confined to argument
# validation are not drawn); the tables and every
# survivor's diff go to mutants/report.md. MUTATION_SAMPLE / CHAPTER_SAMPLE draw that many
# mutants per module / chapter with a fixed seed (empty: all of them).
#   make mutation                        everything
#   make mutation-chapter NB=bptt        one chapter
MUTATION_SAMPLE ?= 120
CHAPTER_SAMPLE ?= 40
MUTATION_JOBS ?= 2
MUTATION_CHAPTERS := sequences_and_convolution recurrent_networks bptt gru lstm gru_to_attention \
                     seq2seq attention decoding self_attention transformer language_model \
                     memory_networks ntm
MUTATION_ARGS = $(if $(1),--sample $(1)) -j $(MUTATION_JOBS)
.PHONY: mutation mutation-deps mutation-package mutation-chapter
mutation: mutation-package
	for nb in $(MUTATION_CHAPTERS); do \
	  $(BIN)/python tools/mutation.py chapter $$nb $(call MUTATION_ARGS,$(CHAPTER_SAMPLE)) || exit 1; \
	done
	$(BIN)/python tools/mutation.py report > mutants/report.md
	@echo "Mutation report: mutants/report.md"

mutation-deps: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r tools/requirements-mutation.txt

mutation-package: mutation-deps
	$(BIN)/python tools/mutation.py package $(call MUTATION_ARGS,$(MUTATION_SAMPLE))

mutation-chapter: mutation-deps
	$(BIN)/python tools/mutation.py chapter $(NB) $(call MUTATION_ARGS,$(CHAPTER_SAMPLE))

# Store a chapter's outputs from one clean top-to-bottom run (no timing metadata):
#   make run-chapter NB=chapters/gru.ipynb
run-chapter: $(STAMP)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.record_timing=False --ExecutePreprocessor.store_widget_state=False $(NB)

# The quotations' web font (_static/fonts/), after a quotation in CJK text is added or
# changed: a subset of Debian's fonts-noto-cjk, fetched with apt-get download (nothing is
# installed). tests/test_font_subset.py fails until it is run.
.PHONY: font
font: $(STAMP)
	$(BIN)/python tools/subset_font.py

# JupyterLab with jupyterlab-myst on the whole repository (chapters, appendix, references.bib),
# opened on chapters/. As root (containers, Binder-like machines) Jupyter needs --allow-root.
# LAB_ARGS: more options, e.g. make lab LAB_ARGS="--no-browser --port=8899"
LAB_ARGS ?=
lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" --LabApp.default_url=/lab/tree/chapters \
		$(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

clean:
	rm -rf _build .jupyter_cache .pytest_cache
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +
