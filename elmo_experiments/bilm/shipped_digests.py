"""SHA-256 of every file of the biLMs shipped inside the package (``bilm/models/NAME``),
checked whenever one is loaded, whether or not its SHA256SUMS is there. Written by
``reproduction/bilm/ship.py``; tests/bilm/test_shipped_gutenberg.py checks it against the
files, so a biLM shipped anew cannot keep its old pin. Do not edit by hand."""

SHIPPED_SHA256: dict[str, dict[str, str]] = {
    "gutenberg": {
        "MODEL_CARD.md": "ddafc3c21b57c090111441f23e3bfd90afb1472354b77ea43c087b58161e4174",
        "options.json": "67c7ad6cc1a403caaf2513b8e0f54ca1c3a073d5cbe857979d08b4375cf68745",
        "softmax.hdf5": "9b31ed10fed937dbf7af4136009fc7366633f5736339ed9b81caf9d67f41cf4e",
        "training.json": "53af535254f17e98f88976dc2955b2186cdf65f6a366ef9d46949574b5c1d898",
        "vocab.txt": "a7071bc5ce36b3e17dedf7b42ec66c2a1e5665a69d6d183da6680ff649afc153",
        "weights.hdf5": "a045f89c5d883edb8a0139b6b7414da8acf8704d85fc029ccbd9720783d91d71",
    },
}
