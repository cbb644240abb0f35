"""Probing a frozen biLM: what each layer captures (the paper's Tables 4, 5 and 6).

- ``pos``: a linear POS classifier per layer (Table 6);
- ``wsd``: nearest mean sense vector per layer, trained on SemCor (Table 5);
- ``neighbours``: nearest SemCor occurrences of a word in context (Table 4).
"""
