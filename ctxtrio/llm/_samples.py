"""Calibration samples: many texts per character class, plus mixed real-world texts.

Every feature of :class:`~ctxtrio.text.tokens.ScriptClass` occurs in several samples,
each sample in a different mix, so the fit (see :mod:`._fit`) is over-determined: 20
measured texts for 12 rates and one fixed overhead. No two samples share a prefix
(prompt caches would otherwise report only the uncached part). The mixed samples
(logs, JSON, CSV, hex ids, base64, emoji chat, code, CJK prose with Latin words) are
built deterministically here so they are the same on every run.
"""

from __future__ import annotations

from typing import Final

__all__ = ["SAMPLES", "WARM_UP"]

#: Sent once before the measured prompts so the server's prefix cache already holds the
#: chat template's head for every one of them.
WARM_UP: Final = "Reply with the single word OK."

_PROSE_SHORT = (
    "Rain moved across the valley before noon, and the farmers waited under the barn roof "
    "for it to pass. Nobody spoke much; they had seen worse weather in April and expected "
    "the afternoon to clear."
)
_PROSE_LONG = (
    "Maintaining an old library means reading more than writing. Before changing a single "
    "line, a careful maintainer asks who depends on the current behaviour, how the change "
    "will be announced, and what happens to people who upgrade without reading the notes. "
    "Most breakage does not come from bold rewrites but from small adjustments that looked "
    "harmless: a default flipped, an error message reworded, a function that used to accept "
    "None and now refuses it. Good projects keep a changelog that explains why, not only what, "
    "and they deprecate loudly for at least one release before removing anything. They also "
    "test the documentation, because examples rot faster than code. When a contributor opens "
    "a pull request, the kindest review is a prompt one that names the real concern early, "
    "rather than a long series of comments about spacing that hides the question that matters."
)
_CODE_SHORT = """\
def merge(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    out = {**a}
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out
"""
_CODE_LONG = """\
const cache = new Map();
export async function fetchUser(id, { signal } = {}) {
  if (cache.has(id)) return cache.get(id);
  const res = await fetch(`/api/users/${encodeURIComponent(id)}`, { signal });
  if (!res.ok) { throw new Error(`HTTP ${res.status} for user ${id}`); }
  return cache.set(id, await res.json()).get(id);
}
for (let i = 0; i < items.length; i += 2) {
  const [left, right] = [items[i], items[i + 1] ?? null];
  totals[left.kind] = (totals[left.kind] || 0) + left.size * 1.5;
  if (right && right.size > 0x10) { flags |= 1 << (right.bit & 7); }
}
template <typename T> std::vector<T> take(const std::vector<T>& v, size_t n) {
  return {v.begin(), v.begin() + std::min(n, v.size())};
}
let total: u64 = rows.iter().filter(|r| r.qty > 0 && r.price_cents >= 100).map(|r| r.qty * r.price_cents).sum();
grep -E '^[a-z_]+=[0-9]+$' ./conf/*.env | sort -u > /tmp/keys_$$.txt && wc -l < /tmp/keys_$$.txt
#define MAX(a, b) ((a) > (b) ? (a) : (b))
m = re.match(r"^(?P<key>[\\w.-]+)\\s*=\\s*(?P<val>.*)$", line); d[m["key"]] = m["val"]
"""
_HAN_SHORT = "今天早上下了一场大雨，街道上的行人都撑着伞匆匆走过。小店的老板把桌椅搬进屋里，等雨停了再摆出来。"
_HAN_LONG = (
    "维护一个开源项目，最重要的工作往往不是写新代码，而是理解已有的用户如何依赖现在的行为。"
    "每一次修改默认值、调整错误信息或者删除一个看似无用的参数，都可能让别人的程序在升级之后突然失败。"
    "因此，成熟的项目会在发布说明中解释修改的原因，并且至少提前一个版本发出弃用警告。"
    "文档中的示例也需要测试，因为示例比代码更容易过时。审查别人提交的补丁时，"
    "最有帮助的做法是尽早指出真正的问题，而不是在格式细节上反复讨论。"
    "长期来看，清楚的沟通和稳定的接口比任何一个新功能都更能赢得用户的信任。"
)
_HANGUL_SHORT = "아침부터 비가 많이 내려서 사람들은 우산을 쓰고 서둘러 걸어갔다. 작은 가게 주인은 의자를 안으로 들여놓았다."
_HANGUL_LONG = (
    "오래된 라이브러리를 관리하는 일은 새 코드를 쓰는 것보다 기존 사용자가 지금의 동작에 "
    "어떻게 의존하는지 이해하는 것이 더 중요하다. 기본값을 바꾸거나 오류 메시지를 고치거나 "
    "쓸모없어 보이는 인자를 지우는 작은 변경도 다른 사람의 프로그램을 업그레이드 뒤에 멈추게 "
    "할 수 있다. 그래서 성숙한 프로젝트는 변경 이유를 릴리스 노트에 설명하고, 무엇인가를 "
    "없애기 전에 적어도 한 번은 경고를 보낸다. 문서에 있는 예제도 시험해야 한다. 예제는 "
    "코드보다 더 빨리 낡기 때문이다. 다른 사람의 변경을 검토할 때에는 형식에 대한 긴 논쟁보다 "
    "진짜 문제를 일찍 짚어 주는 것이 가장 친절하다."
)
_KANA_SHORT = "あさからあめがふっていたので、みんなはかさをさしていそいであるいていった。ちいさなおみせのひとはいすをなかにいれた。"
_KANA_LONG = (
    "ふるいライブラリをメンテナンスするときは、あたらしいコードをかくよりも、いまのうごきに"
    "だれがたよっているのかをしらべることのほうがたいせつです。デフォルトをかえたり、"
    "エラーメッセージをなおしたり、いらないようにみえるパラメータをけしたりするだけでも、"
    "ほかのひとのプログラムがアップデートのあとでとまってしまうことがあります。"
    "だから、しっかりしたプロジェクトはリリースノートにりゆうをかいて、なにかをけすまえに"
    "すくなくともいちどはけいこくをだします。ドキュメントのサンプルもテストするべきです。"
)
_OTHER_SHORT = "Утром шёл сильный дождь, и прохожие спешили под зонтами. Ο καιρός άλλαξε γρήγορα το απόγευμα."
_OTHER_LONG = (
    "Поддержка старой библиотеки — это прежде всего чтение, а не написание кода. Прежде чем "
    "менять хоть одну строку, стоит понять, кто зависит от текущего поведения и что случится "
    "при обновлении. Η συντήρηση ενός παλιού έργου σημαίνει προσοχή στις λεπτομέρειες: μια "
    "αλλαγή στην προεπιλεγμένη τιμή μπορεί να σπάσει προγράμματα άλλων. Élève, café, naïve, "
    "Straße, Übergröße — les accents et les umlauts comptent aussi. صيانة مكتبة قديمة تتطلب "
    "الصبر والقراءة الدقيقة قبل أي تغيير. पुराने पुस्तकालय का रखरखाव धैर्य माँगता है।"
)


def _log_lines() -> str:
    levels = ("INFO", "WARN", "ERROR", "DEBUG")
    parts = ("http", "db-pool", "scheduler", "auth")
    return "".join(
        f"2026-11-{3 + i % 20:02d} {i % 24:02d}:{(i * 7) % 60:02d}:{(i * 13) % 60:02d}.{(i * 37) % 1000:03d} "
        f"{levels[i % 4]} [{parts[i % 4]}] request done id={(i * 7919) % 100000} ms={(i * 31) % 997}\n"
        for i in range(6)
    )


def _json_rows() -> str:
    return ",\n".join(
        f'{{"id": {(i * 104729) % 1000000007}, "ts": "2026-11-{10 + i:02d}T0{i}:1{i}:2{i}Z", '
        f'"level": "{("info", "warn")[i % 2]}", "ok": {("true", "false")[i % 2]}, "tags": ["a{i}", "b"]}}'
        for i in range(4)
    )


def _csv_rows() -> str:
    return "\n".join(
        ",".join(f"{((i * 37 + j * 101) % 1999) - 999}.{(i * j * 7) % 1000}" for j in range(8)) for i in range(6)
    )


def _hex_ids() -> str:
    digits = "0123456789abcdef"
    return "\n".join(
        "".join(digits[(i * 7 + j * j * 13 + j) % 16] for j in range(40)) + f"  refs/heads/branch-{i}" for i in range(6)
    )


def _base64() -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return "".join(alphabet[(i * 29 + i * i * 3) % 64] for i in range(360)) + "=="


_EMOJI_CHAT = (
    "shipped the release 🚀🎉 tests green ✅ thanks everyone 🙏😄 next: docs 📚✍️ "
    "bug in prod 🐛🔥 rollback done 😅👍 coffee ☕☕ meeting moved ⏰ weekend 🌴🇰🇷🇯🇵 "
    "great work 💪✨ see you 👋🙂"
)
_CJK_MIXED = (
    "Python 3.12 的 asyncio 性能提升了约 20%，详见 PEP 703。테스트는 pytest 로 실행하고, "
    "CI では GitHub Actions を使います。Version 2.0 のリリースは 2026 年 12 月です。"
)
_MARKDOWN = (
    "## Configuration\n\n| key | default | meaning |\n|-----|---------|---------|\n"
    "| `timeout_s` | `30.0` | seconds before a request is abandoned |\n"
    "| `retries` | `3` | attempts after the first failure |\n\n"
    "> **Note:** set `CTX_BUDGET=4000` to override the detected window.\n"
)

#: Every calibration text, hand-written class samples first, then the mixed ones.
SAMPLES: Final[tuple[str, ...]] = (
    _PROSE_SHORT, _PROSE_LONG, _CODE_SHORT, _CODE_LONG, _HAN_SHORT, _HAN_LONG,
    _HANGUL_SHORT, _HANGUL_LONG, _KANA_SHORT, _KANA_LONG, _OTHER_SHORT, _OTHER_LONG,
    _log_lines(), _json_rows(), _csv_rows(), _hex_ids(), _base64(), _EMOJI_CHAT, _CJK_MIXED, _MARKDOWN,
)  # fmt: skip
