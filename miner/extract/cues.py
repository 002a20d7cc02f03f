"""Cue families: words that mean the same in many languages (a lasting rule, a prohibition, a wish, …).

The classifier (`classify`) sees which families a unit's text meets, so that
what it learns from one language carries to another. Each family is one
case-insensitive pattern (`CUES`). Searching eleven long alternations in every
unit was a seventh of mining, so `cue_families` first finds, in one pass
(the rules' `LiteralScan`), which of the families' literals the text holds
(`regex_analysis` reads from
each pattern the literals one of which every match contains), and runs only
the patterns whose literals are there. The answer is always the one the
patterns give on their own:

- The literal pass runs over the lower-cased text, which is what the
  case-insensitive patterns see only when lower-casing maps each character
  as the regex engine compares it. A character for which it does not (the
  long s, the dotless i, a capital I with a dot, a final sigma and the
  like: `rule_matching.lowers_plainly`) sends the text to the patterns
  themselves, as it does for the rules. A family's own words may hold
  one (the dotless i of a Turkish word): the analysis cuts its literals
  there, and the pass stays on for every other text.
- A family none of whose literals can be told (the analysis found none) is
  always searched.
"""

from __future__ import annotations

import re

from . import regex_cache
from .regex_analysis import literal_gate, literal_requirements, parse
from .rule_matching import LiteralScan

# Families of cue words across languages. A unit that matches one gets a token naming the family.
CUES: dict[str, str] = {
    "lasting": r"\b(?:always|every time|each time|whenever|from now on|going forward|in (?:the )?future|by default|"
               r"as a rule|every|all)\b|总是|每次|一律|以后都|从现在起|今后|今後|siempre|a partir de ahora|cada vez|"
               r"sempre|d'ora in poi|ogni volta|toujours|désormais|à chaque fois|immer|ab jetzt|jedes mal|"
               r"daqui em diante|всегда|отныне|впредь|каждый раз|いつも|常に|これから|毎回|항상|앞으로|매번|언제나"
               r"|เสมอ|ทุกครั้ง|ต่อจากนี้|จากนี้ไป|โดยค่าเริ่มต้น|по умолчанию|必ず|デフォルトで|기본적으로|반드시|"
               r"\b(?:luôn luôn|luôn|mỗi lần|từ giờ|từ nay|mặc định|selalu|setiap kali|mulai sekarang|her zaman|daima|"
               r"her seferinde|bundan sonra|varsayılan olarak|zawsze|za każdym razem|od teraz|domyślnie|завжди|щоразу|"
               r"відтепер|за замовчуванням|altijd|elke keer|vanaf nu)\b|हमेशा|हर बार|अब से|دائما|دائمًا|في كل مرة",
    "prohibit": r"\b(?:never|don't|do not|doesn't|avoid|stop|no longer|must not|mustn't|shouldn't|not allowed|without)\b|"
                r"不要|别|禁止|不能|不可|不准|不用|nunca|jamás|no\s+(?:uses|hagas|quiero)|mai\b|non\s+(?:usare|fare)|"
                r"jamais|ne\s+(?:pas|jamais)|niemals|nicht|nie\b|никогда|нельзя|не\s+(?:надо|нужно|используй)|"
                r"しない|しないで|禁止|ない|절대|하지\s*마|금지|않"
                r"|อย่า|ห้าม|ไม่ต้อง|ไม่ควร|не\s+(?:трогай|меняй|делай|удаляй|добавляй|пиши|используйте|трогайте)|"
                r"запрещ|избегай|避け|말고|마세요|\b(?:không bao giờ|đừng|tránh|cấm|không được|jangan|tidak boleh|"
                r"hindari|dilarang|asla|yapma|kullanma|kaçın|yasak|nigdy|nie używaj|unikaj|zabronione|ніколи|"
                r"не використовуй|уникай|nooit|gebruik geen|vermijd|niet gebruiken)\b|заборон|कभी नहीं|मत |वर्जित|"
                r"لا تستخدم|أبدا|تجنب|ممنوع",
    "wish": r"\b(?:i (?:want|prefer|like|need|would like|'d like)|i'd rather|please|let's|we should|we need|"
            r"should|must|make sure|ensure)\b|我(?:想|要|希望|喜欢)|请|希望|应该|必须|quiero|prefiero|me gusta|"
            r"debería|hay que|voglio|preferisco|vorrei|bisogna|dovrebbe|je veux|je préfère|il faut|ich möchte|"
            r"ich will|bitte|sollte|muss|eu quero|prefiro|deveria|хочу|предпочитаю|нужно|надо|должен|"
            r"したい|欲しい|ほしい|べき|必要|원해|원합니다|좋겠|해야|필요"
            r"|ต้องการ|อยาก|ควร|ต้อง|ขอให้|กรุณา|пожалуйста|давай|следует|ください|お願い|주세요|하자|"
            r"\b(?:tôi muốn|muốn|nên|phải|vui lòng|hãy|saya mau|saya ingin|ingin|sebaiknya|harus|tolong|mohon|"
            r"istiyorum|tercih ederim|lütfen|olmalı|chcę|wolę|proszę|powinien|powinno|musi|віддаю перевагу|"
            r"будь ласка|треба|потрібно|ik wil|ik heb liever|graag|moet|zou moeten)\b|चाहता|चाहती|चाहिए|कृपया|"
            r"أريد|أفضل|من فضلك|يجب",
    "choose": r"\b(?:use|using|used|switch(?:ed)? to|migrate|adopt|go with|went with|choose|chose|pick(?:ed)?|"
              r"instead of|rather than|replace[ds]?|stick with|keep)\b|用|使用|改用|换成|采用|選擇|选择|选用|usar|"
              r"usamos|cambiar a|en lugar de|usare|usiamo|invece di|utiliser|au lieu de|verwenden|statt|"
              r"stattdessen|utilizar|em vez de|использ|вместо|перейти на|使う|使用|採用|代わりに|사용|대신|쓰자"
              r"|ใช้|แทน|เปลี่ยนเป็น|เลือก|переходим на|перейдём на|выбираем|замени|使っ|使い|ではなく|じゃなく|"
              r"にします|に変更|に切り替え|바꿔|바꾸|선택|쓰기로|\b(?:sử dụng|dùng|thay vì|chuyển sang|thay thế|"
              r"gunakan|menggunakan|pakai|memakai|alih-alih|daripada|ganti ke|beralih ke|yerine|geçelim|zamiast|"
              r"przejdź na|przechodzimy na|замість|переходимо на|gebruik|gebruiken|in plaats van|"
              r"overstappen naar|vervang)\b|\b(?:kullan|używ|użyj)|використов|इस्तेमाल|उपयोग|के बजाय|استخدم|نستخدم|"
              r"بدلا من|بدلاً من",
    "defer": r"\b(?:todo|later|next time|follow[- ]up|remaining|not yet|pending|eventually|someday|tomorrow|"
             r"afterwards|defer(?:red)?|for now|backlog|out of scope|next step)\b|TODO|FIXME|以后|之后|稍后|"
             r"待办|下次|暂时|还没|más tarde|después|pendiente|por ahora|dopo|più tardi|da fare|per ora|plus tard|"
             r"à faire|pour l'instant|später|noch nicht|vorerst|mais tarde|depois|pendente|por enquanto|позже|"
             r"потом|ещё не|пока|後で|あとで|未対応|とりあえず|나중에|다음에|아직|일단"
             r"|ทีหลัง|ภายหลัง|ไว้ก่อน|ยังไม่|คราวหน้า|в следующий раз|отложим|еще не|今度|次回|保留|보류|"
             r"\b(?:sau này|để sau|lần sau|nanti|lain kali|belum|untuk sementara|daha sonra|henüz|şimdilik|"
             r"później|następnym razem|jeszcze nie|na razie|пізніше|ще не|поки що|volgende keer|nog niet|"
             r"voorlopig)\b|बाद में|अभी नहीं|لاحقا|لاحقًا|ليس بعد",
    "cause": r"\b(?:because|since|due to|caused by|the cause|root cause|reason|so that|therefore|fixes|fixed by)\b|"
             r"因为|原因|由于|所以|导致|porque|debido a|causa|perché|a causa|parce que|à cause|weil|wegen|"
             r"потому что|причина|из-за|ので|原因|ため|때문에|원인"
             r"|เพราะ|สาเหตุ|เนื่องจาก|так как|поэтому|せいで|\b(?:bởi vì|nguyên nhân|vì vậy|do đó|karena|"
             r"penyebab|disebabkan|sehingga|çünkü|nedeniyle|sebebi|yüzünden|ponieważ|dlatego|przyczyna|"
             r"z powodu|тому що|через те|omdat|oorzaak|daardoor|vanwege)\b|क्योंकि|कारण|لأن|بسبب|السبب",
    "located": r"\b(?:is in|are in|lives in|located|under|path|folder|directory|file|repo|runs on|port|endpoint|"
               r"url|config|env var|environment variable|command|version)\b|位于|目录|文件|路径|端口|配置|命令|版本|"
               r"carpeta|archivo|ruta|cartella|file|percorso|dossier|fichier|Verzeichnis|Datei|pasta|arquivo|"
               r"папк|файл|путь|порт|ディレクトリ|ファイル|パス|ポート|디렉토리|파일|경로|포트"
               r"|ไฟล์|โฟลเดอร์|ไดเรกทอรี|พอร์ต|เวอร์ชัน|คำสั่ง|ตั้งค่า|อยู่ที่|директор|конфиг|верси|команд|"
               r"フォルダ|バージョン|コマンド|設定|폴더|버전|명령|설정|\b(?:tệp|thư mục|đường dẫn|cổng|phiên bản|"
               r"lệnh|cấu hình|berkas|direktori|jalur|versi|perintah|konfigurasi|шлях|bestand|poort|versie)\b|"
               r"\b(?:dosya|klasör|dizin|sürüm|komut|yapılandırma|plik|katalog|ścieżk|wersj|polecen|konfiguracj)|"
               r"फ़ाइल|फाइल|फ़ोल्डर|पोर्ट|संस्करण|ملف|مجلد|مسار|منفذ|إصدار",
    "narrate": r"^\W*(?:let me|let's (?:check|look|see|start|run|try|read|examine|explore|verify)|i'll|i will|"
               r"i'm going to|now (?:i|let)|first,? (?:i|let)|next,? (?:i|let)|checking|looking|reading|running|"
               r"searching|perfect|great|excellent|good|ok(?:ay)?|now)\b|^(?:让我|我来|我先|现在我|接下来|首先我|好的|"
               r"完美|很好)|^(?:voy a|déjame|ahora voy|perfecto)|^(?:vado a|ora (?:controllo|vedo)|perfetto)|"
               r"^(?:je vais|laisse-moi|parfait)|^(?:ich werde|lass mich|perfekt)|^(?:vou|deixa-me|perfeito)|"
               r"^(?:сейчас|давайте|я (?:сейчас|проверю)|отлично)|^(?:では|まず|次に|完璧)|^(?:이제|먼저|완벽)",
    "recap": r"^\W*(?:i've|i have|i (?:updated|added|created|fixed|implemented|removed|changed|made)|done|fixed|"
             r"updated|added|created|implemented|successfully|all (?:tests|checks) pass|summary|here's what)\b|"
             r"^(?:已|完成|我已经|已经)|^(?:he |listo|hecho)|^(?:ho |fatto)|^(?:j'ai |c'est fait)|"
             r"^(?:ich habe|erledigt)|^(?:eu |feito)|^(?:я |готово)|^(?:完了|修正しました)|^(?:완료|수정했)",
    "thanks": r"\b(?:thanks|thank you|thx|great job|awesome|nice|lgtm|sounds good|looks good|perfect)\b|谢谢|谢了|"
              r"好的|gracias|grazie|merci|danke|obrigad|спасибо|ありがとう|감사|고마워"
              r"|ขอบคุณ|дякую|\b(?:cảm ơn|cám ơn|terima kasih|makasih|teşekkür|sağ ol|dziękuję|dzięki|"
              r"bedankt|dank je)\b|धन्यवाद|शुक्रिया|شكرا|شكرًا",
    "state": r"\b(?:now|currently|is set to|defaults? to|no longer|anymore)\b|现在|目前|默认|ahora|ora|"
             r"maintenant|jetzt|agora|теперь|сейчас|現在|今は|이제|현재"
             r"|ตอนนี้|ปัจจุบัน|\b(?:bây giờ|hiện tại|hiện nay|sekarang|saat ini|şimdi|artık|şu anda|teraz|"
             r"obecnie|тепер|наразі|momenteel)\b|वर्तमान|الآن|حاليا",
}


# The same families in more of the languages no rule file is written for (German, French, Portuguese, Russian,
# Ukrainian, Polish, Turkish, Vietnamese, Indonesian, Thai, Japanese): the everyday ways of saying them.
_MORE_LANGUAGES = {
    "lasting": r"\b(?:grundsätzlich|künftig|in zukunft|ab sofort|à l'avenir|dorénavant|systématiquement|"
               r"toda vez|de agora em diante|daqui pra frente|daqui para a frente|в дальнейшем|с этого момента|"
               r"bundan böyle|na przyszłość|надалі|з цього моменту|ke depannya|seterusnya)\b|ずっと|ตลอด",
    "prohibit": r"\b(?:kein|keine|keinen|ohne|aucun|aucune|sem|nada de|без|tanpa|bez|olmadan|"
                r"не чіпай|не треба|không dùng|không cần|não (?:use|usa|mexe|mexa|coloca|commita))\b",
    "wish": r"\b(?:lass uns|lasst uns|wir sollten|on doit|faut|bora|давайте|zróbmy|trzeba|gerek|lazım|"
            r"ayo|mari|perlu|cần)\b|しよう|ましょう",
    "choose": r"\b(?:nehmen wir|wir nehmen|nimm|setzen auf|bleiben bei|wechseln zu|umsteigen auf|benutzen|nutzen|"
              r"on part sur|partons sur|on prend|on garde|on reste sur|on passe à|passer à|plutôt|choisi|choisir|"
              r"vamos de|vamos com|vou usar|fica com|ficar com|trocar para|troca pra|mudar para|migrar para|"
              r"escolhi|берём|берем|возьмём|возьмем|оставим|остаёмся на|остаемся на|выбрал|делаем на|пишем на|"
              r"переезжаем на|беремо|візьмемо|залишаємо|обираємо|робимо на|пишемо на|bierzemy|weźmy|"
              r"zostajemy przy|zostańmy przy|idziemy w|wybieramy|wybrałem|ile gidelim|ile devam|gidelim|"
              r"geçiyoruz|geçtik|seçtik|seçelim|kalalım|chọn|đổi sang|chuyển qua|xài|pilih|pindah ke|"
              r"tetap pakai)\b|\butilis|にしよう|にしましょう|にする|でいこう|で行こう|でいく|に決め|に移行|"
              r"に乗り換え|ย้ายไป|เปลี่ยนไปใช้|ไปใช้",
    "defer": r"\b(?:nächste woche|nächsten woche|nächsten sprint|nach dem release|irgendwann|verschieben|"
             r"verschoben|zurückstellen|la semaine prochaine|pour la v2|après la release|on verra|reportons|"
             r"reporté|pas maintenant|prochain sprint|semana que vem|próxima semana|pra depois|próxima versão|"
             r"próxima sprint|adiar|deixa pra|на следующей неделе|в следующем спринте|после релиза|отложить|"
             r"не сейчас|наступного тижня|після релізу|відкладемо|відкласти|не зараз|потім|w przyszłym tygodniu|"
             r"po wydaniu|odłożymy|odłóżmy|nie teraz|potem|haftaya|gelecek hafta|sonraya|sonra bakarız|ertele|"
             r"şimdi değil|sonraki sürüm|tuần sau|hoãn|chưa cần|tạm thời|minggu depan|setelah rilis|ditunda|"
             r"tunda|belum perlu)\b|สัปดาห์หน้า|อาทิตย์หน้า|ไว้ทีหลัง|เลื่อน|来週|後回し|リリース後|今はまだ",
    "cause": r"\b(?:das problem|lag an|lag daran|ursache|fehlte|le problème|venait de|la cause|il manquait|"
             r"manquait|o problema|o erro era|a causa|faltava|проблема|дело было в|дело в|оказалось|не хватало|"
             r"справа в|виявилося|бракувало|okazało się|brakowało|chodziło o|eksikti|kaynaklanıyor|kaynaklı|"
             r"meğer|vấn đề|hoá ra|hóa ra|lỗi do|masalahnya|ternyata)\b|\b(?:sorun|sebeb|sebep|neden)|ปัญหา|"
             r"問題は|が原因|足りない",
    "located": r"\b(?:liegt in|liegt unter|läuft auf|ordner|pfad|befehl|se trouve|tourne sur|répertoire|chemin|"
               r"commande|fica em|roda em|caminho|diretório|лежит в|лежат в|находится|хранится|хранятся|"
               r"adresinde|nằm ở|chạy trên|ada di|terletak|leży w|znajduje się|działa na|лежить у|знаходиться)\b|"
               r"อยู่ใน|にある|に置",
    "state": r"\b(?:ab sofort|inzwischen|mittlerweile|dorénavant|à présent|actuellement|atualmente|şu an|giờ|"
             r"kini)\b|現在|これで|ようになりました|になりました",
}
for _name, _more in _MORE_LANGUAGES.items():
    CUES[_name] += "|" + _more


RECENT_TEXTS = 4096  # texts whose families are remembered (a unit is asked again as its neighbour's context)


class _CueScan:
    """The families' patterns, the literals that gate each, and the families of texts seen lately."""

    def __init__(self) -> None:
        self.patterns = [(name, regex_cache.compile(pattern, re.IGNORECASE)) for name, pattern in CUES.items()]
        self.gates = {name: regex_cache.memo("cue-gate", pattern, lambda p=pattern: _gate(p), _is_gate)
                      for name, pattern in CUES.items()}
        self._scan = LiteralScan(set().union(*(gate for gate in self.gates.values() if gate)))
        self._recent: dict[str, tuple[str, ...]] = {}

    def families(self, text: str) -> tuple[str, ...]:
        found = self._recent.get(text)
        if found is None:
            if len(self._recent) >= RECENT_TEXTS:
                self._recent.clear()
            found = self._recent[text] = self._families(text)
        return found

    def _families(self, text: str) -> tuple[str, ...]:
        present = self._scan.present_in(text)
        return tuple(name for name, pattern in self.patterns
                     if (present is None or (gate := self.gates[name]) is None or not present.isdisjoint(gate))
                     and pattern.search(text))


def _gate(pattern: str) -> frozenset[str] | None:
    """The literals one of which every match of `pattern` holds (None: no such set is known)."""
    return literal_gate((literal_requirements(parse(pattern)),))


def _is_gate(value) -> bool:
    return value is None or (isinstance(value, frozenset) and all(isinstance(literal, str) for literal in value))


_SCAN: _CueScan | None = None


def cue_families(text: str) -> tuple[str, ...]:
    """The names of the cue families `text` meets, in the order of `CUES`."""
    global _SCAN
    if _SCAN is None:
        _SCAN = _CueScan()
    return _SCAN.families(text)
