"""Calibration samples: per script class, a short and a long text with different content.

The two texts of a class share no prefix (prompt caches would otherwise report only
the uncached part), differ in length by a few hundred characters (the slope between
them is the rate), and each is dominated by its class. Mixed characters (spaces in
Korean, kanji in Japanese, letters in code, CJK punctuation) are expected: the fit
solves all classes together.
"""

from __future__ import annotations

from typing import Final

from ..text.tokens import ScriptClass

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

#: (short, long) per class; every class of ScriptClass is measured.
SAMPLES: Final[dict[ScriptClass, tuple[str, str]]] = {
    ScriptClass.PROSE: (_PROSE_SHORT, _PROSE_LONG),
    ScriptClass.CODE: (_CODE_SHORT, _CODE_LONG),
    ScriptClass.HAN: (_HAN_SHORT, _HAN_LONG),
    ScriptClass.HANGUL: (_HANGUL_SHORT, _HANGUL_LONG),
    ScriptClass.KANA: (_KANA_SHORT, _KANA_LONG),
    ScriptClass.OTHER: (_OTHER_SHORT, _OTHER_LONG),
}
