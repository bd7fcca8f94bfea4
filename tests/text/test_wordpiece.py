"""text/wordpiece: a count of word pieces from above, and embedding parts that fit the model's window."""

from __future__ import annotations

from ctxtrio.llm.embeddings import prefixes_for
from ctxtrio.text.embedding import PART_CHARS, text_parts
from ctxtrio.text.leads import entry_leads
from ctxtrio.text.wordpiece import (
    PART_TOKENS,
    PREFIX_TOKENS,
    SPECIAL_TOKENS,
    WINDOW_TOKENS,
    fitting_end,
    fitting_start,
    wordpiece_tokens,
)
from testkit.fake_embeddings import bert_tokens

#: Chinese prose: PostgreSQL 15's own messages in its zh_CN translation (Debian's postgresql-15,
#: /usr/share/locale/zh_CN/LC_MESSAGES/postgres-15.mo), messages over 80% ideographs joined, 600 characters.
#: llama-server (all-MiniLM-L6-v2 as GGUF, its /tokenize) makes 583 tokens of it, 585 with [CLS] and [SEP];
#: of its first 520 characters 509.
CJK = "在操作系统崩溃过程中正在写入的页上的数据可能已经部分写入磁盘.在恢复期间,在WAL文件中所保存的已改变记录不足以进行恢复.当对WAL发生检查点事件后进行第一次修改操作时这个选项可以写入页。这样将允许进行完全恢复.关系和与它相关联的类型名称相同,所以不能使用与任何已存在类型名称相冲突的名称.允许查询计划器和执行器将分区边界与查询中的条件进行比较，以确定必须扫描哪些分区无效的浮点数操作.这表示结果越界或者进行了无效的操作,例如除零.在缺省情况下,连接日志只显示每个正在连接主机的IP地址.如果想要显示主机名，那么必须把它打开，但是这取决于主机名解析的设置，这在性能上不会有影响.请检查您的归档命令是否正确执行。您可以安全地取消此备份，但是如果没有所有需要的WAL段，数据库备份将无法使用.很快关闭未结交易以避免覆盖问题.\n您可能还需要提交或回滚旧的准备好的事务，或者删除过时的复制槽.每一层都包含在这一层后面的层次, 对于越往后的层次，就会发送越少的消息.或者另一个服务正在启动，或者锁文件是因为前一次服务器启动崩溃时产生导致的.在每个会话当前正在执行的命令上启用信息收集, 并带有命令开始执行的时间.对于RAID磁盘阵列来说，同步可处理的请求与磁盘阵列中磁盘数量应该相近.如果新的文件没有在N秒内启动,那么强制切换到下一个WAL文件.将记录所有数据块的整页图像，并对照WAL重放结果进行交叉检查.如"
#: Minified JSON: Debian's node-electron-to-chromium, /usr/share/nodejs/electron-to-chromium/full-versions.json,
#: its first 600 characters; llama-server: 473 tokens with [CLS] and [SEP].
JSON = '{"0.20.0":"39.0.2171.65","0.20.1":"39.0.2171.65","0.20.2":"39.0.2171.65","0.20.3":"39.0.2171.65","0.20.4":"39.0.2171.65","0.20.5":"39.0.2171.65","0.20.6":"39.0.2171.65","0.20.7":"39.0.2171.65","0.20.8":"39.0.2171.65","0.21.0":"40.0.2214.91","0.21.1":"40.0.2214.91","0.21.2":"40.0.2214.91","0.21.3":"41.0.2272.76","0.22.1":"41.0.2272.76","0.22.2":"41.0.2272.76","0.22.3":"41.0.2272.76","0.23.0":"41.0.2272.76","0.24.0":"41.0.2272.76","0.25.0":"42.0.2311.107","0.25.1":"42.0.2311.107","0.25.2":"42.0.2311.107","0.25.3":"42.0.2311.107","0.26.0":"42.0.2311.107","0.26.1":"42.0.2311.107","0.27.0":"42.0.23'
#: A psql table's rule (``\\pset border 2``): llama-server: 522 tokens for 520 characters (stress/real_embed_refusal.py).
RULE = "+" + "+".join(["-" * 10] * 60) + "+"
#: The same trail stress/real_embed_refusal.py leads the rule with.
TRAIL = ("Quolls", "Quoll 7")
#: Prose of python3.11-doc (library/os.rst.txt, os.getcwd and os.chdir's neighbourhood, retold).
PROSE = " ".join(
    f"Return a string representing the current working directory number {i}, and change it with chdir."
    for i in range(12)
)


def test_the_count_is_at_least_the_models() -> None:
    """wordpiece_tokens never counts fewer tokens than llama-server's all-MiniLM-L6-v2 made of real texts."""
    measured = {CJK: 585, CJK[:520]: 509, JSON: 473, RULE[:520]: 522}
    for text, tokens in measured.items():
        assert wordpiece_tokens(text) + SPECIAL_TOKENS >= tokens
    assert wordpiece_tokens(CJK) + SPECIAL_TOKENS <= 600  # one an ideograph or mark, not more


def test_parts_of_tables_json_and_cjk_fit_the_models_window() -> None:
    """A part of a table's rule, of CJK prose or of JSON stays within the window, counted by the fake
    endpoint's tokenizer too (llama-server's count of these: 522 and 585 before, over its batch of 512)."""
    for text in (RULE * 3, CJK * 3, JSON * 3):
        parts = text_parts(text, TRAIL)
        assert len(parts) >= 3
        for part in parts:
            assert wordpiece_tokens(part.text) + SPECIAL_TOKENS <= WINDOW_TOKENS
            assert bert_tokens(part.text) <= WINDOW_TOKENS
            assert part.text == "Quolls › Quoll 7\n" + text[part.start : part.end]
        shown = "".join(text[part.start : part.end] for part in parts)
        assert "".join(shown.split()) == "".join(text.split())  # every character but spaces between parts


def test_parts_fit_the_window_with_a_model_familys_document_prefix() -> None:
    """The embedder puts a family's document prefix before each part after it is cut (nomic's
    ``search_document: ``): a part of a table's rule, CJK or JSON still fits with it. Before, such a
    part with nomic's prefix was 516 tokens by llama-cpp-python's tokenizer (nomic26's measurement):
    llama-cpp-python cut it silently, llama-server refuses it."""
    models = ("nomic-embed-text-v1.5", "multilingual-e5-small", "bge-small-en-v1.5", "all-minilm-l6-v2")
    documents = {prefixes_for(model).document for model in models}
    assert "search_document: " in documents and "passage: " in documents  # the families this room is for
    for prefix in documents:
        assert wordpiece_tokens(prefix) <= PREFIX_TOKENS
        for text in (RULE * 3, CJK * 3, JSON * 3):
            for part in text_parts(text, TRAIL):
                assert wordpiece_tokens(prefix + part.text) + SPECIAL_TOKENS <= WINDOW_TOKENS
                assert bert_tokens(prefix + part.text) <= WINDOW_TOKENS
        (lead,) = entry_leads(f"Title\n=====\n\n{CJK}{CJK}。\n", ("标题" * 200,))
        assert wordpiece_tokens(prefix + lead.text) + SPECIAL_TOKENS <= WINDOW_TOKENS


def test_prose_parts_are_cut_by_characters_as_before() -> None:
    """Prose is far under the window: its parts are cut at PART_CHARS, at a sentence end in their second half."""
    parts = text_parts(PROSE, TRAIL)
    assert len(parts) >= 2
    first = PROSE.rfind(". ", PART_CHARS // 2, PART_CHARS) + 1
    assert (parts[0].start, parts[0].end) == (0, first)
    assert max(wordpiece_tokens(part.text) for part in parts) < WINDOW_TOKENS // 2


def test_a_trail_too_long_for_the_window_is_cut_to_half_of_it() -> None:
    """A heading trail of punctuation leaves a part room: it is cut, and each part still fits."""
    parts = text_parts(CJK, ("=" * 2000,))
    assert parts and all(wordpiece_tokens(part.text) + SPECIAL_TOKENS <= WINDOW_TOKENS for part in parts)
    assert all(part.text.startswith("=" * (PART_TOKENS // 2) + "\n") for part in parts)


def test_an_entry_lead_of_cjk_fits_the_window() -> None:
    """An entry's lead (its name and first sentence) over CJK text is cut to the window too."""
    text = f"Title\n=====\n\n{CJK}{CJK}。\n"
    (lead,) = entry_leads(text, ("标题" * 200,))
    assert wordpiece_tokens(lead.text) + SPECIAL_TOKENS <= WINDOW_TOKENS


def test_fitting_end_cuts_a_word_too_long_to_fit_inside() -> None:
    """A word longer than the tokens left is cut inside: at a character a token, or two letters a token."""
    assert fitting_end("ab 0123456789", 0, 13, 5) == 3 + 4  # "ab" 1, "0123" 4
    assert fitting_end("abcdefghij", 0, 10, 3) == 6
    assert fitting_end("a, b", 0, 4, 10) == 4


def test_fitting_start_is_the_start_fitting_end_keeps() -> None:
    """The start of a text within a count: cut inside a word too long, the whole text when it fits."""
    assert fitting_start("ab 0123456789", 5) == "ab 0123"
    assert fitting_start("a, b", 10) == "a, b"
    assert fitting_start("", 3) == ""
