"""GAP (Webster et al. 2018, gendered ambiguous pronouns): does a pronoun refer to name A, to
name B, or to neither? The reader of its TSV files, a span-pair model over the coreference span
representations, the official scorer's figures (F1 overall, masculine, feminine and the bias
F/M) and ``elmo-exp score gap``; ``reproduction/gap/README.md`` tells how to run it."""
