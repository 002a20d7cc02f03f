"""Each refinement step on its own, then the whole step on units a rule matched."""

from __future__ import annotations

import dataclasses

import pytest

from miner.extract import nlp, program_output, sentences
from miner.extract import refine as r
from miner.extract.model import Turn, Unit
from miner.extract.rule_matching import CLASSIFIER_RULE_PREFIX, Hit
from miner.extract.rules import load_rules

REF = r.Refiner(nlp.load(blank_only=True))


def doc(text: str):
    return REF.doc(text)

TURN = {"user": Turn("u", "s", "user", "", "", "", "", False, ""),
        "assistant": Turn("a", "s", "assistant", "", "", "", "", False, "")}


def unit(text: str, role: str = "user", previous: str = "") -> Unit:
    return Unit(TURN[role], 0, text, previous)


@pytest.mark.parametrize("text", ["Should we use pnpm here?", "What port does the API use", "用哪个数据库？",
                                  "Can you switch to pnpm?"])
def test_questions(text):
    assert REF.is_question(doc(text))


@pytest.mark.parametrize("text", ["We use pnpm.", "What we need is a queue.", "The port is 8080."])
def test_not_questions(text):
    assert not REF.is_question(doc(text))


# Questions typed without "?" in languages other than English: never memories (bench/questions.py measures it on
# sentences written for it). The statements beside them open with the same words and stay statements.
@pytest.mark.parametrize("text", [
    "cómo lanzo las pruebas en local", "donde esta el fichero de variables", "por qué falla el despliegue",
    "¿Cuál es el puerto del API", "come faccio a fermare il container", "qual è il branch di rilascio",
    "como posso parar o container", "onde fica o arquivo de configuração", "où sont les journaux du service",
    "est-ce que la file tourne encore", "wie starte ich den Dienst neu", "wo liegt die Konfiguration",
    "warum ist der Build so langsam", "was bedeutet dieser Fehler"])
def test_questions_without_question_mark_in_other_languages(text):
    assert REF.is_question(doc(text))


@pytest.mark.parametrize("text", [
    "Como regla, los commits van en inglés", "Donde sea posible, usa el cliente compartido",
    "Que no se despliegue nada los viernes", "Come concordato, il proxy è nginx", "Dove possibile usa pnpm",
    "Como combinamos, o proxy é nginx", "Comme convenu, le proxy est nginx", "Wie besprochen nutzen wir Postgres",
    "Wo möglich, nutze den gemeinsamen Client", "Perché è più veloce, usiamo Redis",
    "Quando il build fallisce, rilancia i test", "Como si fuera poco, el proxy también cachea",
    "Come se fosse un cron, il worker gira ogni ora"])
def test_statements_that_open_like_questions_in_other_languages(text):
    assert not REF.is_question(doc(text))


# The same in Japanese, Korean and Russian (`questions`): a closing particle, or a question word in the last clause
# that no "wherever"/"however" turns into a statement. Chinese question words inside statements stay statements.
@pytest.mark.parametrize("text", [
    "デプロイのスクリプトってどこ", "このエラーは何が原因なんでしょうか", "キャッシュを消しても大丈夫かな",
    "ビルドに何分かかる",
    "テストはもう通ったの", "Redisのバージョンはいくつにする", "로그 파일은 어디에 저장돼", "배포는 어떻게 하나요",
    "이 옵션 꼭 켜야 할까", "캐시 만료 시간이 몇 분이야", "почему падает линтер", "как откатить миграцию",
    "на какой порт смотрит nginx", "нужен ли нам отдельный воркер", "что значит эта ошибка в логах"])
def test_questions_without_question_mark_in_asian_languages_and_russian(text):
    assert sentences.is_unmarked_question(text)


@pytest.mark.parametrize("text", [
    "どこに置くか迷ったら、設定は config/ にまとめる", "何があっても本番には直接プッシュしない", "いつも main から切る",
    "どれを使うかはチームで決める", "どの DB を使うかどうか来週決める", "로그가 어디에 쌓이는지 대시보드에 표시한다",
    "커밋 전에 몇 가지 규칙을 지켜 주세요",
    "デプロイは毎週金曜にやる", "어디서든 공용 클라이언트를 쓴다", "어떻게 하든 리뷰 없이는 머지하지 않는다",
    "얼마나 급하든 테스트는 돌려 줘", "배포는 매주 금요일에 한다.", "Как мы договорились, логи пишем в stdout",
    "Где возможно, используем общий HTTP-клиент", "Что бы ни случилось, в пятницу не деплоим",
    "Что касается ORM, остаёмся на SQLAlchemy", "Почему-то без флага сборка нестабильна, поэтому флаг оставляем.",
    "明确哪些模块属于这次分析的范围", "通过日志还是确认不出根本原因", "下次可以精准确认按照什么模块分类",
    # Thai "อะไร", "ใคร", "ไหน" after a "not" or a "don't": anything, anyone, any
    "อย่าแชร์ API key ให้ใคร", "ใช้ Redis แทน Memcached ไม่ต้องเปลี่ยนอะไร", "ห้าม push ตรงเข้า main ไม่ว่ากรณีไหน"])
def test_statements_that_look_like_questions_in_asian_languages_and_russian(text):
    assert not sentences.is_unmarked_question(text)


@pytest.mark.parametrize("text", ["Thanks!", "Perfect!", "ok thanks", "Great, thank you!", "谢谢！", "LGTM",
                                  # in languages the dev data lacks: an acknowledgement stored as a decision
                                  "はい、お願いします。", "了解しました！", "Спасибо, отлично!", "Danke schön!",
                                  "Merci, parfait.", "Tamam, teşekkürler.", "ขอบคุณครับ", "ठीक है, धन्यवाद।",
                                  "شكراً، ممتاز"])
def test_greetings(text):
    assert REF.is_greeting(doc(text))


@pytest.mark.parametrize("text", ["Great, now use pnpm for every package install.",
                                  "Спасибо, теперь используем pnpm для всех пакетов.", "はい、pnpmを使います。",
                                  "Danke, wir nehmen ab jetzt pnpm."])
def test_greeting_with_content_is_kept(text):
    assert not REF.is_greeting(doc(text))


@pytest.mark.parametrize("text", ["Let me check the config file.", "Now I'll update the tests.", "I'm going to run it.",
                                  "Checking the logs for the error.", "让我看一下配置文件。", "**Now let me** fix it."])
def test_narration(text):
    assert REF.is_narration(doc(text))


@pytest.mark.parametrize("text", ["I've updated the README with the new flags.", "Successfully built the image.",
                                  "All tests pass now after the change."])
def test_recaps(text):
    assert REF.is_recap(doc(text))


def test_not_narration_or_recap():
    assert not REF.is_narration(doc("The server listens on port 8080."))
    assert not REF.is_recap(doc("The cache is invalidated on every deploy."))


# The assistant announcing its next step in the European languages the spaCy patterns do not read.
@pytest.mark.parametrize("text", [
    "Je vais d'abord vérifier la table des partitions.",
    "Je regarde comment le module de log est configuré.",
    "Voy a revisar la configuración del cliente HTTP.",
    "Ahora busco dónde se inicializa la caché.",
    "Vado a controllare il file delle migrazioni.",
    "Ora verifico che i test passino ancora.",
    "Vou verificar como o build é feito no CI.",
    "Primeiro, leio o arquivo de configuração do servidor.",
    "Lass mich die Logs vom letzten Lauf ansehen.",
    "Jetzt prüfe ich die Größe des Images.",
])
def test_narration_in_other_languages(text):
    assert REF.is_narration(doc(text))


# A first person stating a choice, or a statement of how things are, stays.
@pytest.mark.parametrize("text", [
    "Je garde le format binaire pour les messages.",
    "Uso PostgreSQL para el almacenamiento de sesiones.",
    "Il controllo degli accessi è gestito dal proxy.",
    "Vou usar o Redis para a fila de mensagens.",
    "Ich verwende den neuen Treiber nur im Testbuild.",
    "Le serveur écoute sur le port 8080.",
])
def test_choices_and_facts_in_other_languages_are_not_narration(text):
    assert not REF.is_narration(doc(text))


# The assistant reporting how a check came out: what it just saw, not what holds.
@pytest.mark.parametrize("text", [
    "All 42 tests pass (30 in `ParserTest`, 12 in `LexerTest`).",
    "Great — the unit tests now pass on both branches.",
    "Build succeeded after the cache was cleared.",
    "Clean boot, no exceptions in the log.",
    "`cargo clippy` — passes clean.",
    "Tous les tests passent maintenant.",
    "Funciona perfectamente.",
    "I test passano anche su Windows.",
    "Os testes passam com a nova fixture.",
    "Alle Tests sind grün nach dem Umbau.",
    "编译通过，服务在 9000 端口启动。",
    "テストはすべて通りました。",
    "빌드가 성공했습니다.",
])
def test_check_reports_are_recaps(text):
    assert REF.is_check_report(doc(text))
    assert REF.refine(unit(text, "assistant"), hit_for(text, "fact")).dropped_by == "recap"


def test_a_check_report_that_a_choice_rule_fired_on_is_kept():
    text = "Build passed, parser now on `lark` instead of `ply`."
    assert REF.refine(unit(text, "assistant"), hit_for(text, "fact")).dropped_by == "recap"
    assert REF.refine(unit(text, "assistant"), hit_for(text, "decision")).candidate is not None
    classifier = hit_for(text, "decision")
    classifier = Hit(dataclasses.replace(classifier.rule, id=CLASSIFIER_RULE_PREFIX + "decision"), classifier.match)
    assert REF.refine(unit(text, "assistant"), classifier).dropped_by == "recap"  # the classifier's is no rule


# What a check found, a failure's cause, and how to run the checks stay.
@pytest.mark.parametrize("text", [
    "Confirmed that the queue consumer runs with a prefetch of 20.",
    "Confirmed — the cron entry fires at midnight in the container.",
    "Build succeeded, and the docs site now serves `/guide/setup/`.",
    "Tests pass; the flaky one was a timezone bug in `parse_date`.",
    "Everything checks out — the volume is mounted and the health probe answers.",
    "Funciona, pero el caché se vacía al reiniciar.",
    "The build failed because `libssl` is missing from the base image.",
    "Tests run with `./gradlew test --offline`.",
    "The checks in `ci.yml` pass only on Linux runners.",
    "The smoke test lives in `scripts/smoke.sh`.",
    "La compilation échoue sans la variable `JAVA_HOME`.",
    "Funciona con Redis y con Memcached.",
    "测试用 pytest 运行，配置在 pyproject.toml。",
])
def test_findings_and_commands_are_not_check_reports(text):
    assert not REF.is_check_report(doc(text)) and not REF.is_recap(doc(text))


@pytest.mark.parametrize("text,ok", [("short one", False), ("----- 1234 ---- 5678 -----", False),
                                     ("The API listens on port 8080.", True), ("数据库改用 PostgreSQL 了", True),
                                     # Thai: 18 characters, five words ("always answer in Thai")
                                     ("ตอบเป็นภาษาไทยเสมอ", True), ("ใช้ Redis", False), ("ครับ ๆ", False)])
def test_quality_gate(text, ok):
    assert sentences.passes_quality_gate(text) is ok


@pytest.mark.parametrize("text", ["Maybe we should use Redis.", "I think the proxy might be the cause.",
                                  "可能是代理的问题。", "也许用 Redis 更好。"])
def test_hedges(text):
    assert REF.is_hedged(doc(text)) and sentences.is_hedged(text)


@pytest.mark.parametrize("text,hedged", [
    # The speaker's own wish is not a guess: "I think" before it softens, it does not hedge.
    ("I think I want to keep the old export endpoint until every client has moved over.", False),
    ("I think we'd like the nightly job to email a summary.", False),
    ("I think the proxy drops the header.", True),
    ("I think we need a second worker for the imports.", True),  # a judgement of what the work needs
    ("I think I want the banner at the top, maybe in yellow.", True),  # another hedge still counts
    # A hedge in an afterthought qualifies the afterthought; the statement before it stands.
    ("The cache is rebuilt on every deploy — probably to avoid stale keys after a schema change.", False),
    ("`audit.log` must never be committed —— 其中可能含有客户的邮箱地址", False),
    ("The importer runs nightly; it might also run on demand later.", False),
    ("We keep the sessions in Redis — maybe.", True),  # no afterthought: the statement is hedged
    ("Maybe the cache is rebuilt on every deploy — to avoid stale keys after a schema change.", True),
])
def test_what_a_hedge_qualifies(text, hedged):
    assert REF.is_hedged(doc(text)) is hedged and sentences.is_hedged(text) is hedged


@pytest.mark.parametrize("text,option", [
    ("**Option 2**: Cache the rendered page for a day", True),
    ("## Option B: Split the importer per tenant", True),
    ("- Cons: Needs a second database connection", True),
    ("**方案 A：把配置放进环境变量**", True),
    ("- 缺点：每次部署都要重建镜像", True),
    ("- `OptionButton`: renders the menu entry", False),
    ("Options are read from config.yaml at start-up.", False),
])
def test_options_offered_for_a_choice(text, option):
    assert sentences.is_option(text) is option


def test_an_option_is_kept_but_unconfirmed():
    text = "**Option 1**: Disable the export flag in the test environment"
    verdict = REF.refine(unit(text, "assistant"), hit_for(text))
    assert verdict.candidate is not None and verdict.candidate.tentative


def test_self_contained_takes_previous_unit():
    u = unit("This keeps the builds reproducible.", previous="We pin every dependency.")
    merged = REF.make_self_contained(u, doc(u.text))
    assert merged == "We pin every dependency. This keeps the builds reproducible."


def test_a_short_unit_ending_in_this_takes_the_unit_before_it():
    u = unit("I want to simplify this.", previous="The retry loop in sync.ts nests three timeouts.")
    merged = REF.make_self_contained(u, doc(u.text))
    assert merged == "The retry loop in sync.ts nests three timeouts. I want to simplify this."
    assert REF.make_self_contained(unit("I want to simplify this."), doc("I want to simplify this.")) is None
    long = "Move the retry loop out of sync.ts and into the shared client so every caller gets it."
    assert REF.make_self_contained(unit(long), doc(long)) == long  # long enough to carry its own subject


def test_dangling_without_context_is_dropped():
    assert REF.make_self_contained(unit("It is faster that way."), doc("It is faster that way.")) is None
    assert REF.make_self_contained(unit("That works.", previous="Should we cache it?"), doc("That works.")) is None


def test_markup_is_removed_from_memory_text():
    assert sentences.display_text("- **Build stage:** use the slim image") == "Build stage: use the slim image"


RULES = load_rules([])


def hit_for(text: str, category: str = "decision", tentative: bool = False):
    from miner.extract.rules import parse_rule

    rule = parse_rule({"id": "t", "category": category, "roles": ["user", "assistant"], "patterns": ["."],
                       "tentative": tentative}, "test", 1, "any")
    return Hit(rule, rule.search(text))


def test_refine_keeps_and_marks_tentative():
    verdict = REF.refine(unit("Maybe we should move the cache to Redis."), hit_for("x"))
    assert verdict.candidate is not None and verdict.candidate.tentative
    assert verdict.candidate.confidence < 0.6


@pytest.mark.parametrize("text,role,reason", [
    ("Should we move the cache to Redis?", "user", "question"),
    ("Let me move the cache to Redis now.", "assistant", "narration"),
    ("I've moved the cache to Redis for you.", "assistant", "recap"),
    ("It is faster.", "user", "not-self-contained"),
    ("Use uv.", "user", "quality-gate"),
    # Program output pasted into the conversation: nobody stated it.
    ("AssertionError: first upload should be chunked: expected undefined to equal 'chunked'", "user", "output"),
    ("'Content-Type'=>'application/json', 'X-Trace'=>'on'", "user", "output"),
    ("    at Uploader.<anonymous> (test/upload.ts:41:7)", "user", "output"),
    ("[new branch] feat/export-csv -> origin/feat/export-csv", "user", "output"),
    ('filter {ids: {"./spec/models/invoice_spec.rb" => [12]}}', "user", "output"),
    ("Invoices export as CSV Got 0 failures and 2 other errors:", "user", "output"),
    ("I'll help you track down why the export skips empty rows.", "assistant", "narration"),
    ("Uncaught (in promise) TypeError: upload.start is not a function", "user", "output"),
    ('{"level":"info","msg":"worker 3 started"}', "user", "output"),
    ("not ok 7 - tests/unit/invoice-test.ts: totals include tax", "user", "output"),
    ("src/cart.ts:12:5 - error TS2322: Type 'string' is not assignable to type 'number'.", "user", "output"),
    # A Chinese question the user writes without a question mark.
    ("把配置放进环境变量是否会影响本地调试", "user", "question"),
    ("为什么不把校验放在服务端,这样做有什么好处", "user", "question"),
    # A request pinned to a line of the code as it is now: done at once, stale after.
    ("Add a debug print on line 76 of the importer.", "user", "line-anchored"),
    ("I want to extend the test starting on line 39.", "user", "line-anchored"),
    # A lead-in that stops before its list: what it introduces is the next unit.
    ("The fix is to also retry on a 503 and either:", "assistant", "lead-in"),
    ("The importer we settled on uses the following:", "assistant", "lead-in"),
    ("发布之后旧版本会被删除,这样以后还能回滚吗", "user", "question"),
    # Thai asks with a closing particle or an opening "why", and Arabic has its own question mark.
    ("ช่วยย้ายแคชไปใช้ Redis ได้ไหมครับ", "user", "question"),
    ("ทำไมถึงเก็บเซสชันไว้ในไฟล์แทนฐานข้อมูล", "user", "question"),
    ("هل يجب أن ننقل ذاكرة التخزين المؤقت إلى Redis؟", "user", "question"),
    # … or with where, what, when, how at its end, then its polite particles
    ("ไฟล์ config อยู่ที่ไหนครับ", "user", "question"),
    ("webhook ของเรารันที่พอร์ตอะไรนะครับ", "user", "question"),
    ("เราจะ deploy เวอร์ชันใหม่เมื่อไหร่คะ", "user", "question"),
    # … and a "not" before it in another chunk, or "อย่าง" (not "อย่า", "don't"), leaves it a question
    ("ตัวอย่างนี้เขียนโดยใคร", "user", "question"),
    ("มันไม่ทำงาน เป็นเพราะอะไร", "user", "question"),
    ("ถ้าไม่ใช้ Redis จะใช้อะไรครับ", "user", "question"),
])
def test_refine_drops_with_reason(text, role, reason):
    verdict = REF.refine(unit(text, role), hit_for(text))
    assert verdict.candidate is None and verdict.dropped_by == reason


def test_keywords_cover_identifiers_paths_versions_and_cjk():
    verdict = REF.refine(unit("Pin node 20.11.1 in .nvmrc and run src/build.py; 数据库用 PostgreSQL。"), hit_for("x"))
    keywords = verdict.candidate.keywords
    for expected in ("20.11.1", "nvmrc", "src/build.py", "postgresql", "数据", "据库"):
        assert expected in keywords


@pytest.mark.parametrize("text,expected", [
    ("Make the circles bigger, so the difference shows. (", "Make the circles bigger, so the difference shows."),
    ("Large values should look MUCH larger.)", "Large values should look MUCH larger."),
    ("Use the slim image (Alpine).", "Use the slim image (Alpine)."),
    ("Pin node (not bun)", "Pin node (not bun)"),
])
def test_dangling_brackets_are_trimmed(text, expected):
    assert sentences.display_text(text) == expected


# --- what the spaCy steps add on the blank pipeline: lemmas, determiners, keywords ---------------------

@pytest.mark.parametrize("text", ["Looking at the failing test now.", "I will now inspect the handler.",
                                  "Okay, let's quickly run the suite."])
def test_narration_matches_inflected_work_verbs(text):
    assert REF.is_narration(doc(text))


@pytest.mark.parametrize("text", ["I have now written the parser docs.", "I've just removed the stale flag."])
def test_recap_matches_participles(text):
    assert REF.is_recap(doc(text))


def test_recap_needs_a_participle():
    assert not REF.is_recap(doc("I have to update the docs before the release."))


def test_this_as_determiner_needs_no_context():
    assert not REF.opens_with_reference(doc("This file holds the deploy settings."))
    assert REF.opens_with_reference(doc("This means the cache is stale."))
    assert REF.opens_with_reference(doc("It listens on port 8080."))


def test_keywords_add_lemmas():
    verdict = REF.refine(unit("The workers were restarting after every deploys."), hit_for("x"))
    assert {"worker", "restart", "deploy"} <= set(verdict.candidate.keywords)
    assert "workers" in verdict.candidate.keywords


def test_blank_pipeline_has_lookup_lemmas():
    assert [t.lemma_ for t in doc("Checking the indexes")] == ["check", "the", "index"]


# --- the trained pipeline's tags and parse ------------------------------------------------------------
# Docs annotated as a trained English pipeline annotates them, so the parse-based steps are tested here
# whether or not a model is installed; the tests after these run the real model when there is one.

def parsed(words, tags, pos, deps, heads, lemmas):
    from spacy.tokens import Doc

    return Doc(REF.nlp.vocab, words=words, tags=tags, pos=pos, deps=deps, heads=heads, lemmas=lemmas)


AUX_QUESTION = (["Is", "the", "cache", "still", "used"], ["VBZ", "DT", "NN", "RB", "VBN"],
                ["AUX", "DET", "NOUN", "ADV", "VERB"], ["auxpass", "det", "nsubjpass", "advmod", "ROOT"],
                [4, 2, 4, 4, 4], ["be", "the", "cache", "still", "use"])
FUTURE_NARRATION = (["First", "of", "all", "I", "will", "carefully", "inspect", "the", "handler", "."],
                    ["RB", "IN", "DT", "PRP", "MD", "RB", "VB", "DT", "NN", "."],
                    ["ADV", "ADP", "PRON", "PRON", "AUX", "ADV", "VERB", "DET", "NOUN", "PUNCT"],
                    ["advmod", "prep", "pobj", "nsubj", "aux", "advmod", "ROOT", "det", "dobj", "punct"],
                    [6, 0, 1, 6, 6, 6, 6, 8, 6, 6],
                    ["first", "of", "all", "I", "will", "carefully", "inspect", "the", "handler", "."])
WE_RECAP = (["We", "have", "finally", "completed", "the", "migration", "."],
            ["PRP", "VBP", "RB", "VBN", "DT", "NN", "."], ["PRON", "AUX", "ADV", "VERB", "DET", "NOUN", "PUNCT"],
            ["nsubj", "aux", "advmod", "ROOT", "det", "dobj", "punct"], [3, 3, 3, 3, 5, 3, 3],
            ["we", "have", "finally", "complete", "the", "migration", "."])
MODAL_HEDGE = (["The", "cache", "may", "hold", "stale", "rows", "."], ["DT", "NN", "MD", "VB", "JJ", "NNS", "."],
               ["DET", "NOUN", "AUX", "VERB", "ADJ", "NOUN", "PUNCT"],
               ["det", "nsubj", "aux", "ROOT", "amod", "dobj", "punct"], [1, 3, 3, 3, 5, 3, 3],
               ["the", "cache", "may", "hold", "stale", "row", "."])
DETERMINER = (["This", "one", "breaks", "the", "build", "."], ["DT", "NN", "VBZ", "DT", "NN", "."],
              ["DET", "NOUN", "VERB", "DET", "NOUN", "PUNCT"], ["det", "nsubj", "ROOT", "det", "dobj", "punct"],
              [1, 2, 2, 4, 2, 2], ["this", "one", "break", "the", "build", "."])
PRONOUN = (["This", "breaks", "the", "build", "."], ["DT", "VBZ", "DT", "NN", "."],
           ["PRON", "VERB", "DET", "NOUN", "PUNCT"], ["nsubj", "ROOT", "det", "dobj", "punct"],
           [1, 1, 3, 1, 1], ["this", "break", "the", "build", "."])


def blank_twin(annotated):
    """The same words through the blank pipeline, to show what the parse adds."""
    return doc(" ".join(annotated[0]).replace(" .", "."))


def test_parse_finds_a_question_without_question_mark():
    assert REF.is_question(parsed(*AUX_QUESTION))
    assert not REF.is_question(blank_twin(AUX_QUESTION))


def test_parse_finds_first_person_future_narration():
    assert REF.is_narration(parsed(*FUTURE_NARRATION))
    assert not REF.is_narration(blank_twin(FUTURE_NARRATION))


def test_parse_finds_recap_with_any_first_person_subject():
    assert REF.is_recap(parsed(*WE_RECAP))
    assert not REF.is_recap(blank_twin(WE_RECAP))


def test_parse_marks_modal_verbs_as_hedges():
    assert REF.is_hedged(parsed(*MODAL_HEDGE))
    assert not REF.is_hedged(blank_twin(MODAL_HEDGE))


def test_parse_tells_determiner_from_pronoun():
    assert not REF.opens_with_reference(parsed(*DETERMINER))
    assert REF.opens_with_reference(blank_twin(DETERMINER))  # the blank pipeline cannot tell: it asks for context
    assert REF.opens_with_reference(parsed(*PRONOUN))


def test_parse_does_not_flag_plain_statements():
    statement = parsed(["The", "API", "listens", "on", "port", "8080", "."], ["DT", "NNP", "VBZ", "IN", "NN", "CD", "."],
                       ["DET", "PROPN", "VERB", "ADP", "NOUN", "NUM", "PUNCT"],
                       ["det", "nsubj", "ROOT", "prep", "pobj", "nummod", "punct"], [1, 2, 2, 2, 3, 4, 2],
                       ["the", "API", "listen", "on", "port", "8080", "."])
    assert not any((REF.is_question(statement), REF.is_narration(statement), REF.is_recap(statement),
                    REF.is_hedged(statement), REF.opens_with_reference(statement)))


@pytest.fixture(scope="module")
def trained():
    pipeline = nlp.load(nlp.DEFAULT_MODEL)
    if not pipeline.trained:
        pytest.skip(f"no trained spaCy pipeline installed ({nlp.DEFAULT_MODEL})")
    return r.Refiner(pipeline)


@pytest.mark.parametrize("text,step", [
    ("Is the cache still used", "is_question"),
    ("First of all I will carefully inspect the handler.", "is_narration"),
    ("We have finally completed the migration.", "is_recap"),
    ("The cache may hold stale rows.", "is_hedged"),
    ("This means the cache is stale.", "opens_with_reference"),
    ("Thanks, looks good!", "is_greeting"),
    ("Let me check the config file.", "is_narration"),
    ("I've updated the README with the new flags.", "is_recap"),
    ("Maybe we should use Redis.", "is_hedged"),
    ("Should we use pnpm here?", "is_question"),
])
def test_trained_pipeline_steps(trained, text, step):
    assert getattr(trained, step)(trained.doc(text))


def test_trained_pipeline_keeps_plain_statements(trained):
    statement = trained.doc("This file holds the deploy settings.")
    assert not trained.opens_with_reference(statement) and not trained.is_hedged(statement)
    assert trained.refine(unit(statement.text), hit_for("x")).candidate is not None
    assert trained.refine(unit("Use uv."), hit_for("x")).dropped_by == "quality-gate"
    assert trained.refine(unit("It is faster."), hit_for("x")).dropped_by == "not-self-contained"


def test_block_quotes_are_not_the_speakers_words():
    assert sentences.is_quote("> The service must return 404 for unknown ids.")
    verdict = REF.refine(unit("> The service must return 404 for unknown ids.", "assistant"), hit_for("x"))
    assert verdict.candidate is None and verdict.dropped_by == "quote"
    assert not sentences.is_quote("The service returns 404 for unknown ids.")


@pytest.mark.parametrize("text", ["Let's go with pnpm as the package manager.", "Let's use Postgres for the jobs table."])
def test_lets_with_a_choice_is_not_narration(text):
    assert not REF.is_narration(doc(text))


def test_a_configured_model_that_is_not_installed_falls_back_to_the_blank_pipeline(tmp_path):
    pipeline = nlp.load(str(tmp_path / "no-such-model"))
    assert not pipeline.trained and "lookup lemmas" in pipeline.name
    assert nlp.has_parse(pipeline.nlp("Use pnpm.")) is False


def test_every_narration_and_recap_pattern_opens_with_a_listed_word():
    """The refiner runs its matcher only on units opening with one of `_OPENERS` (or an -ing form)."""
    for pattern in r._narration_patterns() + r._recap_patterns():
        first = pattern[0]
        words = first.get("LOWER")
        words = words.get("IN", []) if isinstance(words, dict) else [words]
        assert (set(words) <= r._OPENERS and words) or first.get("LOWER", {}).get("REGEX") == "ing$", pattern


# --- the miner refines a unit once: a repeat is served from its memo ---------------------------------

def test_a_repeated_unit_is_refined_once_and_keeps_its_own_provenance(store, pipeline, monkeypatch):
    from miner import config as config_mod
    from miner.runtime.mine import Miner

    miner = Miner(store, config_mod.load(), pipeline=pipeline)
    calls = []
    real = miner.refiner.refine
    monkeypatch.setattr(miner.refiner, "refine", lambda *a: calls.append(a[0].text) or real(*a))
    first = Turn("u1", "s1", "user", "", "", "", "", False, "")
    again = Turn("u2", "s2", "user", "", "", "", "", False, "")
    text = "We'll use PostgreSQL instead of MySQL for the database."
    found = miner.extract([Unit(first, 0, text), Unit(again, 0, text)], lambda turn: "")
    assert calls == [text]  # the second sighting came from the memo
    assert [c.unit.turn.uuid for c in found] == ["u1", "u2"]
    assert found[0].text == found[1].text and found[0].category == found[1].category == "decision"
    # Another previous unit can change the result ("This …" takes it), so it is refined again.
    miner.extract([Unit(first, 1, text, previous="Context.")], lambda turn: "")
    assert calls == [text, text]


def test_a_rule_stated_before_a_closing_question_is_kept_without_the_question():
    text = "From now on always run the linter before committing, ok?"
    verdict = REF.refine(unit(text), hit_for(text))
    assert verdict.candidate is not None and verdict.candidate.text == "From now on always run the linter before committing"
    cjk = "我希望以后所有代码修改都先列出步骤,应该怎么做?"
    assert REF.refine(unit(cjk), hit_for(cjk)).candidate.text == "我希望以后所有代码修改都先列出步骤"


@pytest.mark.parametrize("text", ["Should we use pnpm here, or npm?", "We could cache it, but should we?",
                                  "What if we cache the results, would that help?"])
def test_a_question_with_a_clause_before_it_is_still_a_question(text):
    from miner.extract.rules import parse_rule

    rule = parse_rule({"id": "t", "category": "decision", "roles": ["user"], "patterns": ["(?i)cache|pnpm"]},
                      "test", 1, "any")
    verdict = REF.refine(unit(text), Hit(rule, rule.search(text)))
    assert verdict.candidate is None and verdict.dropped_by == "question"


def test_a_statement_doubted_by_its_closing_question_is_not_kept():
    text = "We could cache the rendered pages in Redis for a day, but should we?"
    assert REF.refine(unit(text), hit_for(text)).dropped_by == "question"


def test_a_rule_before_a_dashed_question_is_kept():
    text = "Always squash the commits before merging — okay?"
    assert REF.refine(unit(text), hit_for(text)).candidate.text == "Always squash the commits before merging"


def test_the_refinement_memo_keeps_no_turn_text(store, pipeline):
    from miner import config as config_mod
    from miner.runtime.mine import Miner

    miner = Miner(store, config_mod.load(), pipeline=pipeline)
    turn = Turn("u1", "s1", "user", "A long message. " * 500 + "We'll use PostgreSQL instead of MySQL.", "", "", "",
                False, "")
    found = miner.extract([Unit(turn, 0, "We'll use PostgreSQL instead of MySQL for the database.")], lambda t: "")
    assert found and found[0].unit.turn is turn
    assert all(c is None or c.unit.turn.text == "" for _, c, _ in miner._refined.values())


@pytest.mark.parametrize("text,role", [
    ("确认 Node 是否已安装。", "assistant"),                 # a step that asks nothing
    ("确认 `AdminLayout` 是否有侧边栏之后再改样式", "assistant"),  # the assistant's plan, not a question to anyone
    ("以后所有接口文档都用英文写", "user"),     # a rule, no question form
    ("The TypeError comes from a missing null check in the parser.", "user"),  # names an error, is not output
    ("At line 72 the parser falls back to an empty map when the section is missing.", "assistant"),  # the user's only
    ("The retry limit is set in config.yaml (line 12).", "user"),  # a line in passing, not an edit pinned to it
    ("Deploys run from main only, in this order: build, migrate, swap.", "assistant"),  # the list is in the unit
])
def test_statements_are_not_taken_for_questions_or_output(text, role):
    verdict = REF.refine(unit(text, role), hit_for(text))
    assert verdict.candidate is not None, verdict.dropped_by


# --- hedges in other languages --------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Quizás deberíamos usar Redis para la caché.", "Tal vez el proxy corta la cabecera.",
    "A lo mejor el índice está corrupto.", "Creo que el error viene del parser.", "Probablemente falta un índice.",
    "Forse conviene usare Redis per la cache.", "Penso che il proxy tagli l'header.", "Credo che manchi un indice.",
    "Talvez seja melhor usar Redis.", "Acho que o erro vem do parser.", "Provavelmente falta um índice.",
    "Peut-être faut-il utiliser Redis.", "Je pense que le proxy coupe l'en-tête.", "Probablement un index manquant.",
    "Vielleicht sollten wir Redis nehmen.", "Ich glaube, der Proxy schneidet den Header ab.",
    "Wahrscheinlich fehlt ein Index.",
    "Возможно, стоит использовать Redis для кэша.", "Наверное, прокси обрезает заголовок.",
    "Может быть, нам нужен второй воркер.", "Кажется, индекс повреждён.", "Думаю, ошибка в парсере.",
    "Вероятно, не хватает индекса.", "Скорее всего, кэш устарел.",
    "セッションのキャッシュにはRedisを使うかもしれない。", "たぶんプロキシがヘッダーを削っているのが原因です。",
    "多分、検索用のインデックスが壊れているのが原因です。", "おそらくキャッシュが古いままになっているのが問題です。",
    "ヘッダーが消えるのはプロキシの設定の問題だと思います。",
    "아마 프록시 설정 때문에 헤더가 사라지는 거예요.", "아마도 검색 인덱스가 깨져서 결과가 비어 있어요.",
    "세션 캐시가 너무 오래된 데이터를 보여주는 것 같아요.", "세션 캐시에는 Redis를 써야 할 수도 있어요.",
    "Можливо, варто використати Redis для кешу.", "Być może brakuje indeksu w tabeli sesji.",
    "Chyba proxy obcina nagłówek.", "Misschien moeten we Redis voor de cache gebruiken.",
    "Belki önbellek için Redis kullanmalıyız.", "Sanırım proxy başlığı siliyor.",
    "Mungkin kita perlu Redis untuk cache sesi.", "Có lẽ nên dùng Redis cho bộ nhớ đệm.",
    "शायद हमें कैश के लिए Redis चाहिए।", "ربما نحتاج إلى Redis للتخزين المؤقت.",
    "อาจจะต้องใช้ Redis สำหรับแคชของเซสชัน", "ผมคิดว่าพร็อกซีตัดเฮดเดอร์ทิ้ง",
])
def test_hedges_in_other_languages(text):
    assert sentences.is_hedged(text), text
    assert REF.is_hedged(doc(text)), text
    verdict = REF.refine(unit(text), hit_for(text))
    assert verdict.candidate is not None and verdict.candidate.tentative


@pytest.mark.parametrize("text", [
    "Usamos Redis para la caché de sesiones.", "Il proxy taglia l'header.", "Wir nehmen Redis für den Cache.",
    "Сервер может обрабатывать сто запросов в секунду.",  # "может" alone is "can"
    "Это невозможно сделать без индекса.",  # "невозможно" (impossible) holds "возможно" but is not it
    "Невероятно быстрый парсер на Rust.",  # "невероятно" (incredibly) holds "вероятно"
    "Используем возможности PostgreSQL для полнотекстового поиска.",
    "Redisを使います。", "我们多分析一下日志。", "这个任务需要十多分钟。",  # 多分 in Chinese is no hedge
    "아마존 서버에 배포합니다.", "Redis를 사용할 수 있어요.",  # 아마존 is Amazon; 수 있 (can), not 수도 있
    "이것 같은 방식으로 정리해요.",
    "Сервер може обробляти сто запитів на секунду.",  # Ukrainian "може" alone is "can"
    "Możemy użyć Redis do cache sesji.", "Chắc chắn là dùng Redis cho bộ nhớ đệm.",  # "certainly"
])
def test_words_that_only_look_like_hedges(text):
    assert not sentences.is_hedged(text), text
    assert not REF.is_hedged(doc(text)), text


@pytest.mark.parametrize("text,hedged", [
    ("Кэш сбрасывается при каждом деплое — возможно, чтобы избежать устаревших ключей.", False),
    ("El índice se reconstruye cada noche; quizás también al desplegar más adelante.", False),
    ("Возможно, кэш сбрасывается при каждом деплое — чтобы избежать устаревших ключей.", True),
])
def test_a_hedge_in_an_afterthought_in_other_languages(text, hedged):
    assert sentences.is_hedged(text) is hedged and REF.is_hedged(doc(text)) is hedged


# --- pasted program output: tracebacks of any runtime, test runners, metric printouts --------------------

@pytest.mark.parametrize("text,previous", [
    # IPython / Jupyter
    ("---> 95 self._reader = _make_reader(f, **self.options)", ""),
    ("----> 5 df = pd.read_csv('data/train.csv', sep=';')", "Cell In[3], line 5"),
    ("93 kwds.update(kwds_defaults)", ""),
    ("93 def read_csv(filepath_or_buffer, sep=','):", ""),
    ("94     return _read(filepath_or_buffer, kwds)", ""),
    ("3 import pandas as pd", ""),
    ("96 # the reader picks the engine from the options below", "---> 95 self._reader = _make_reader(f)"),
    ("File /opt/conda/lib/python3.11/site-packages/pandas/io/parsers/readers.py:95, in read_csv", ""),
    ("File ~/work/train.py:12", ""),
    ("Cell In[12], line 3", ""),
    # plain Python
    ('File "/srv/app/billing/invoice.py", line 42, in total', ""),
    ("DeprecationWarning: the load function is deprecated, use read instead", ""),
    # Rust
    ("thread 'main' panicked at src/main.rs:5:9:", ""),
    ("thread 'tokio-runtime-worker' panicked at 'called `Option::unwrap()` on a `None` value', src/db.rs:41:18", ""),
    ("note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace", ""),
    ("error[E0382]: borrow of moved value: `config`", ""),
    ("at /rustc/9b00956e5/library/core/src/panicking.rs:645:5", ""),
    # Go
    ("goroutine 1 [running]:", ""),
    ("panic: runtime error: index out of range [3] with length 3", ""),
    ("/home/dev/app/main.go:12 +0x1d", ""),
    # Java, Kotlin, .NET
    ("Caused by: java.lang.IllegalStateException: connection pool closed", ""),
    ('Exception in thread "main" java.lang.NullPointerException: name', ""),
    ("at com.acme.billing.Invoice.total(Invoice.java:42)", ""),
    ("at org.example.MainKt.main(Main.kt:7)", ""),
    ("... 23 more", ""),
    (r"at Billing.Invoice.Total() in C:\src\Billing\Invoice.cs:line 42", ""),
    # pytest
    ("E   assert 3 == 4", ""),
    ("E       AssertionError: expected the invoice total to include tax", ""),
    ("E       +  where 3 = len([1, 2, 3])", ""),
    ("FAILED tests/test_invoice.py::test_total - AssertionError: 3 != 4", ""),
    ("tests/test_invoice.py:12: in test_total", ""),
    ("========= 2 failed, 40 passed in 3.21s =========", ""),
    # metric printouts
    ("- Label: 15.86%", ""),
    ("Accuracy: 0.9312", ""),
    ("Accuracy: 0.93", ""),
    ("val_loss: 0.2345", ""),
    ("- F1 score: 0.88 (macro)", ""),
    ("Mean absolute error = 3.1416", ""),
    ("- Positive: 62.07%", ""),
    ("Epoch 3/10 - loss: 0.2345 - accuracy: 0.9312", ""),
    ("precision=0.91, recall=0.87, f1=0.89", ""),
    ("- Cat: 0.87", "- Dog: 0.13"),  # one of several lines of the same shape
    ("- Cat: 15.8%", "- Dog: 12.1%"),
    ("--> src/main.rs:5:9", ""),
    ("Throughput: 1523.4 req/s", ""),
    # log lines
    ("Mar 03 14:22:05 buildbox sshd[2210]: error: could not load host key: /etc/ssh/ssh_host_ed25519_key", ""),
    ("oct 11 08:01:40 web-2 nginx: upstream timed out while reading the response header", ""),
    ("2024-03-03 14:22:05,120 ERROR billing.invoice: the total does not include tax", ""),
    ("[2024-03-03T14:22:05Z] [warn] retrying the export in 30 s", ""),
    ("2024-03-03T14:22:05.120+01:00 INFO worker started on port 8080", ""),
    ('time="2024-03-03T14:22:05Z" level=error msg="failed to pull the image"', ""),
])
def test_program_output_is_dropped(text, previous):
    assert program_output.is_output(text, previous)
    verdict = REF.refine(unit(text, previous=previous), hit_for(text))
    assert verdict.candidate is None and verdict.dropped_by == "output"


@pytest.mark.parametrize("text,previous", [
    ("- Coverage target: 80%", ""),
    ("Timeout: 30 s for every request", ""),
    ("- Learning rate: 0.001", ""),  # a value somebody picked: round, not printed
    ("- Dropout: 0.25", "- Learning rate: 0.001"),
    ("- Line height: 1.25", ""),
    ("- Availability SLO: 99.95%", ""),  # a chosen value's label keeps any precision
    ("- Accuracy target: 0.95", ""),
    ("- Default temperature: 0.7", ""),
    ("- Threshold: 0.8734", ""),
    ("- Discount: 12.5%", ""),
    ("- Cat: 15.8%", ""),  # one decimal of a percentage is what people write, alone
    ("- Node: 20.11", ""),  # versions: not shares, however many of them are listed
    ("- Python: 3.12", "- Node: 20.11"),
    ("- Ruff: 0.12", ""),
    ("-> 3 retries at most for the importer", ""),
    ("test timeout: 2.5", ""),
    ("- Max line length: 100", "- Coverage target: 80%"),
    ("Retries: 3", "Timeout: 30"),
    ("2 return flights are booked for the offsite.", ""),
    ("3 users complained about the export after 4.2 shipped.", ""),
    ("10 workers handle the import queue at peak.", ""),
    ("5 import jobs run every night.", ""),
    ("File uploads go to S3 under the tenant prefix.", ""),
    ("The panic handler must log the request id.", ""),
    ("E2E tests run nightly against staging.", ""),
    ("Warning: never push to main without a review.", ""),
    ("Caused by a race, the export skips rows; we lock the table now.", ""),
    ("We keep the model whose accuracy is above 0.9312 on the holdout set.", ""),
    ("The version is pinned to 2.31 for now.", ""),
    ("2024 roadmap: ship the importer first.", ""),
    ("2024-03-03: we moved the importer to the nightly queue.", ""),  # a dated note, not a log line
    ("May 12 is the release date; freeze the schema a week before.", ""),
    ("On 2024-03-03 14:22 the export failed, so we now retry it three times.", ""),
    ("2024-03-03 14:22:05 is when the migration ran; info about it is in the runbook.", ""),
])
def test_statements_that_look_a_little_like_output_are_kept(text, previous):
    assert not program_output.is_output(text, previous), text
    verdict = REF.refine(unit(text, previous=previous), hit_for(text))
    assert verdict.dropped_by != "output"


def test_refinement_names_each_step_it_ran_in_order_and_what_a_step_changed():
    kept = "Always squash the commits before merging — okay?"
    verdict = REF.refine(unit(kept), hit_for(kept))
    assert verdict.steps == ("quote", "output", "question: the statement before it", "greeting", "line-anchored",
                             "lead-in", "narration", "recap", "self-contained", "quality-gate", "hedge")
    hedged = REF.refine(unit("Maybe we should move the session cache to Redis."), hit_for("x"))
    assert hedged.candidate.tentative and hedged.steps[-1] == "hedge: unconfirmed"
    merged = REF.refine(unit("It keeps the build reproducible.", previous="We pin every dependency in uv.lock."),
                        hit_for("x"))
    assert "self-contained: with the sentence before it" in merged.steps
    dropped = REF.refine(unit("> The service must return 404 for unknown ids.", "assistant"), hit_for("x"))
    assert dropped.dropped_by == "quote" and dropped.steps == ("quote",)
    greeting = REF.refine(unit("Great, thank you!"), hit_for("x"))
    assert greeting.steps[-1] == "greeting" and greeting.dropped_by == "greeting"
    assert [s.split(":")[0] for s in verdict.steps] == list(REF.STEPS)


@pytest.mark.parametrize("text,scope", [
    ("From now on we always use pnpm in this repo.", "project"),
    ("In this project we never push straight to main.", "project"),
    ("Para este proyecto prefiero commits pequeños.", "project"),
    ("以后这个项目里都用 pnpm。", "project"),
    ("I always want type hints on public functions.", "global"),
    ("I prefer this approach to mocking.", "global"),
])
def test_a_preference_of_everywhere_said_of_this_project_stays_the_projects(text, scope):
    """"We always use X in this repo" was a preference of every project: another project's block showed it."""
    from miner.extract.rules import parse_rule

    rule = parse_rule({"id": "t", "category": "preference", "roles": ["user"], "patterns": ["."], "scope": "global"},
                      "test", 1, "any")
    verdict = REF.refine(unit(text), Hit(rule, rule.search(text)))
    assert verdict.candidate is not None and verdict.candidate.scope == scope, verdict



@pytest.mark.parametrize("text,scope", [
    ("Never edit the generated files under ./gen/pb by hand.", "project"),
    ("Always update CHANGELOG.md before a release.", "project"),
    ("Always run `make proto` before building the gateway.", "project"),
    ("Use the staging namespace gw-stg2 for manual tests, always.", "project"),
    ("Never bump the pinned grpc_gateway version without asking me.", "project"),
    ("I prefer short commit messages in the imperative mood.", "global"),
    ("Always reply in English, and/or keep the answer short.", "global"),
    ("Please use pnpm, never npm.", "global"),
])
def test_a_preference_that_names_a_thing_of_the_project_stays_the_projects(text, scope):
    """A standing rule naming a path, a file, inline code or an identifier of the project was a preference of every
    project: another project's block showed it (and named another client's namespace there)."""
    from miner.extract.rules import parse_rule

    rule = parse_rule({"id": "t", "category": "preference", "roles": ["user"], "patterns": ["."], "scope": "global"},
                      "test", 1, "any")
    verdict = REF.refine(unit(text), Hit(rule, rule.search(text)))
    assert verdict.candidate is not None and verdict.candidate.scope == scope, verdict