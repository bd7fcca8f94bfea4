"""Calibration samples: many texts per character class, plus mixed real-world texts.

Every feature of :class:`~ctxtrio.text.tokens.ScriptClass` occurs in several samples,
each sample in a different mix, so the fit (see :mod:`._fit`) is over-determined: 30
measured texts for 13 rates. Samples are long (about 60-700 tokens, 6,800 in all,
most over 100): a short one's count is noisy relative to its size, and the lift that
keeps every sample from being under-counted then raises every class (issue 9: prose
over-counted by 1.28 after calibration). No two samples share a prefix (prompt caches
would otherwise report only the uncached part). The real-world samples (logs, access
logs, compact and pretty-printed JSON, CSV, YAML, hex ids, UUIDs, base64, emoji chat,
Python and other code, CJK prose with Latin words) are built deterministically here so
they are the same on every run.
"""

from __future__ import annotations

import json
from typing import Final

__all__ = ["OVERHEAD_PROBES", "SAMPLES", "WARM_UP"]

#: Sent once before the measured prompts so the server's prefix cache already holds the
#: chat template's head for every one of them.
WARM_UP: Final = "Reply with the single word OK."
#: One-character prompts: every tokenizer spends one token on an ASCII letter, so the
#: smaller of their two counts, minus one, is the fixed overhead (template, BOS).
OVERHEAD_PROBES: Final = ("a", "I")

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
_HAN_LONG = (
    "维护一个开源项目，最重要的工作往往不是写新代码，而是理解已有的用户如何依赖现在的行为。"
    "每一次修改默认值、调整错误信息或者删除一个看似无用的参数，都可能让别人的程序在升级之后突然失败。"
    "因此，成熟的项目会在发布说明中解释修改的原因，并且至少提前一个版本发出弃用警告。"
    "文档中的示例也需要测试，因为示例比代码更容易过时。审查别人提交的补丁时，"
    "最有帮助的做法是尽早指出真正的问题，而不是在格式细节上反复讨论。"
    "长期来看，清楚的沟通和稳定的接口比任何一个新功能都更能赢得用户的信任。"
)
_HANGUL_LONG = (
    "오래된 라이브러리를 관리하는 일은 새 코드를 쓰는 것보다 기존 사용자가 지금의 동작에 "
    "어떻게 의존하는지 이해하는 것이 더 중요하다. 기본값을 바꾸거나 오류 메시지를 고치거나 "
    "쓸모없어 보이는 인자를 지우는 작은 변경도 다른 사람의 프로그램을 업그레이드 뒤에 멈추게 "
    "할 수 있다. 그래서 성숙한 프로젝트는 변경 이유를 릴리스 노트에 설명하고, 무엇인가를 "
    "없애기 전에 적어도 한 번은 경고를 보낸다. 문서에 있는 예제도 시험해야 한다. 예제는 "
    "코드보다 더 빨리 낡기 때문이다. 다른 사람의 변경을 검토할 때에는 형식에 대한 긴 논쟁보다 "
    "진짜 문제를 일찍 짚어 주는 것이 가장 친절하다."
)
_KANA_LONG = (
    "ふるいライブラリをメンテナンスするときは、あたらしいコードをかくよりも、いまのうごきに"
    "だれがたよっているのかをしらべることのほうがたいせつです。デフォルトをかえたり、"
    "エラーメッセージをなおしたり、いらないようにみえるパラメータをけしたりするだけでも、"
    "ほかのひとのプログラムがアップデートのあとでとまってしまうことがあります。"
    "だから、しっかりしたプロジェクトはリリースノートにりゆうをかいて、なにかをけすまえに"
    "すくなくともいちどはけいこくをだします。ドキュメントのサンプルもテストするべきです。"
)
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

_PROSE_3 = (
    "The ferry left at six, half empty, and the gulls followed it out past the breakwater "
    "until the wind turned. Marta stood at the rail with her coffee going cold, counting the buoys the way her "
    "father had taught her: red on the right coming home, green on the left, and never trust a channel you have "
    "not seen at low tide. By the time the island rose out of the haze, the sun had burned off the last of the fog "
    "and the engine had settled into the steady drone that meant, she knew from twenty summers, about forty minutes more."
)
_PY = '''\
class RateLimiter:
    """Token bucket: `capacity` tokens, refilled at `rate` per second."""

    def __init__(self, capacity: int, rate: float) -> None:
        self.capacity = capacity
        self.rate = rate
        self._tokens = float(capacity)
        self._updated = time.monotonic()

    def try_acquire(self, cost: int = 1) -> bool:
        now = time.monotonic()
        self._tokens = min(self.capacity, self._tokens + (now - self._updated) * self.rate)
        self._updated = now
        if self._tokens >= cost:
            self._tokens -= cost
            return True
        return False


async def fetch_all(urls: list[str], limit: RateLimiter) -> dict[str, int]:
    results: dict[str, int] = {}
    for url in urls:
        while not limit.try_acquire():
            await asyncio.sleep(0.05)
        async with httpx.AsyncClient(timeout=10.0) as client:
            response = await client.get(url)
            results[url] = response.status_code
    return results
'''


def _pretty_json() -> str:
    rows = [
        {
            "user_id": 40000 + i * 613,
            "name": f"user{i:03d}",
            "email": f"user{i:03d}@example.org",
            "roles": ["reader", "editor"][: 1 + i % 2],
            "quota_mb": 512 * (1 + i % 4),
            "active": i % 3 != 0,
            "last_login": f"2026-10-{1 + i % 28:02d}T{i % 24:02d}:{i * 7 % 60:02d}:00+00:00",
        }
        for i in range(6)
    ]
    return json.dumps({"page": 3, "per_page": 6, "items": rows}, indent=2)


def _access_log() -> str:
    paths = ("/api/v2/orders", "/static/app.3f9c1.js", "/healthz", "/api/v2/users/me", "/login")
    return "\n".join(
        f"10.{i % 4}.{i * 17 % 256}.{i * 29 % 256} - - [03/Nov/2026:{i % 24:02d}:{i * 13 % 60:02d}:{i * 31 % 60:02d} +0000] "
        f'"{("GET", "POST")[i % 2]} {paths[i % 5]} HTTP/1.1" {(200, 304, 404, 500, 201)[i % 5]} {i * 977 % 40000} '
        f'"-" "Mozilla/5.0 (X11; Linux x86_64)"'
        for i in range(8)
    )


def _int_csv() -> str:
    head = "date,store,sku,units,revenue_cents,returned\n"
    return head + "\n".join(
        f"2026-09-{1 + i % 30:02d},S{i % 7:02d},{100000 + i * 7919 % 90000},{i * 13 % 50},{i * 104729 % 1000000},{i % 5 == 0}"
        for i in range(20)
    )


def _yaml_config() -> str:
    return "".join(
        f'service-{i}:\n  image: registry.local/team/svc-{i}:{1 + i}.{i * 3 % 10}.{i * 7 % 10}\n  replicas: {1 + i % 3}\n  env:\n    LOG_LEVEL: {("info", "debug")[i % 2]}\n    TIMEOUT_MS: "{1000 * (1 + i % 5)}"\n  ports: ["{8000 + i}:80"]\n'
        for i in range(5)
    )


def _uuids() -> str:
    return "\n".join(
        f"{(i * 0x5851F42D4C957F2D + 0x14057B7EF767814F) % (1 << 128):032x}"[:8]
        + "-"
        + f"{(i * 2654435761) % (1 << 64):016x}"[:4]
        + f"-4{i * 40503 % 4096:03x}-a{i * 9973 % 4096:03x}-"
        + f"{(i * 0x9E3779B97F4A7C15) % (1 << 64):016x}"[:12]
        + f" status=ok retries={i % 4}"
        for i in range(10)
    )


_HAN_3 = (
    "秋天的傍晚，老人常常坐在河边的石凳上，看着渔船一条一条地回到码头。孩子们在岸边追逐打闹，"
    "卖烤红薯的小贩推着车慢慢走过，香味飘得很远。等到天色完全暗下来，街灯亮了，人们才陆续回家，"
    "只留下河水在桥下轻轻地流着。这样平静的日子，在城市里已经很难找到了。"
)
_HANGUL_3 = (
    "가을 저녁이면 할아버지는 강가 돌의자에 앉아 고깃배가 하나씩 부두로 돌아오는 것을 바라보곤 했다. "
    "아이들은 물가에서 뛰어다니고, 군고구마 장수는 수레를 밀며 천천히 지나갔다. 날이 완전히 어두워지고 "
    "가로등이 켜지면 사람들은 하나둘 집으로 돌아갔고, 다리 아래로는 강물만 조용히 흘렀다."
)
_JA_3 = (
    "秋の夕方になると、おじいさんはよく川辺の石のベンチに座って、漁船が一隻ずつ港に戻ってくるのを眺めていた。"
    "子どもたちは岸辺で走り回り、焼き芋屋さんは屋台を押しながらゆっくりと通り過ぎた。すっかり暗くなって街灯がつくと、"
    "人々は少しずつ家に帰り、橋の下には川の水だけが静かに流れていた。"
)
_RU_3 = (
    "Осенними вечерами старик часто сидел на каменной скамье у реки и смотрел, как рыбацкие лодки одна за другой "
    "возвращаются к причалу. Дети бегали по берегу, продавец печёной картошки медленно катил свою тележку, и запах "
    "разносился далеко. Когда совсем темнело и зажигались фонари, люди расходились по домам."
)
_MIX_3 = (
    "Ελληνικά: Το φθινόπωρο ο ήλιος δύει νωρίς και η θάλασσα ηρεμεί. Türkçe: Sonbahar akşamları nehir kenarı "
    "sessizdir. Tiếng Việt: Buổi chiều mùa thu, ông lão thường ngồi bên bờ sông. עברית: בערבי הסתיו הזקן יושב ליד הנהר. "
    "العربية: في أمسيات الخريف يجلس الرجل العجوز بجانب النهر. हिन्दी: शरद की शाम को बूढ़ा आदमी नदी के किनारे बैठता है।"
)
_EMOJI_3 = (
    "standup 🧍‍♀️🧍 blockers: none 🙌 infra 🔧⚙️ migration 80% 📈 oncall 📟😴 lunch 🍜🍣🥗 "
    "release train 🚆 at 3pm ⏱️ flags 🇩🇪🇫🇷🇧🇷 kudos 🏆👏👏 bugs 🐞🐞🐜 weekend ⛰️🏕️🚴‍♂️ ❤️💙💚"
)
_CJK_MIX_3 = (
    "部署说明：先运行 `make build`，然后执行 kubectl apply -f deploy.yaml。배포 후에는 /healthz 엔드포인트가 "
    "200 을 반환하는지 확인하세요. ログは Grafana の dashboard 12 番で見られます（保存期間は 30 日）。"
)


def _pretty_json1() -> str:
    nodes = [
        {
            "host": f"node-{i:02d}.dc{1 + i % 2}.internal",
            "cpu": 4 * (1 + i % 4),
            "mem_gb": 16 * (1 + i % 3),
            "load": [round((i * 0.37) % 4, 2), round((i * 0.53) % 4, 2)],
            "healthy": i % 4 != 3,
            "zone": None if i % 5 == 0 else f"z{i % 3}",
        }
        for i in range(5)
    ]
    return json.dumps({"cluster": "prod-eu", "version": 17, "nodes": nodes}, indent=1)


def _metrics_json() -> str:
    series = [
        {
            "metric": "http_requests_total",
            "labels": {"code": str(200 + i % 3 * 100), "route": f"/v{1 + i % 2}/items"},
            "ts": 1764700000 + i * 15,
            "value": 1000 + i * 7919 % 100000,
            "delta": round(i * 1.37 % 50, 3),
        }
        for i in range(6)
    ]
    return json.dumps(series, indent=2)


#: Every calibration text, hand-written class samples first, then the mixed ones.
SAMPLES: Final[tuple[str, ...]] = (
    _PROSE_LONG, _PROSE_3, _CODE_LONG, _PY, _HAN_LONG, _HAN_3, _HANGUL_LONG, _HANGUL_3,
    _KANA_LONG, _JA_3, _OTHER_LONG, _RU_3, _MIX_3, _log_lines() + _log_lines().replace("INFO", "TRACE"),
    _access_log(), _json_rows(), _pretty_json(), _csv_rows(), _int_csv(), _hex_ids(), _uuids(), _base64(),
    _EMOJI_CHAT, _EMOJI_3, _CJK_MIXED, _CJK_MIX_3, _MARKDOWN, _yaml_config(), _pretty_json1(), _metrics_json(),
)  # fmt: skip
