"""Function words of common languages, and a page's language guessed from them.

The learned extractor's "stop-word share" feature: running prose is dense with function words
(the, und, de, и, 的 ...), menus, bylines and teasers are not. The lists are short on purpose:
the most frequent function words of each language, which carry most of that signal. A page's
language is the list that covers the largest share of its words, so no language detector or
`lang` attribute is needed (both are often wrong on real pages).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable

from newscrawl.html.unicode_scripts import IDEOGRAPHS_AND_KANA

__all__ = [
    "CJK",
    "CJK_STOP_CHARS",
    "GUESS_WORDS",
    "LANGUAGES_OF",
    "STOPWORDS",
    "guess_language",
    "language_of_counts",
    "stopword_share",
]

_LISTS = {
    "en": "the of and to a in is that for it on was with as be by at this are from or have an "
    "not but his they we you he she had has were which their been will would there can all "
    "its who our more one said also about than when into what",
    "de": "der die und in den von zu das mit sich des auf für ist im dem nicht ein eine als "
    "auch es an werden aus er hat dass sie nach wird bei einer um am sind noch wie einem "
    "über einen so zum war haben nur oder aber vor zur bis mehr durch",
    "fr": "de la le et les des en du un une est que pour dans qui sur pas par au plus ne se "
    "sont avec il ce a aux elle ou mais nous vous ils cette été leur son sa ses",
    "es": "de la que el en y a los del se las por un para con no una su al es lo como más "
    "pero sus le ya o fue este ha sí porque esta son entre cuando muy sin sobre también",
    "it": "di e il la che in a per un è del non le una con si da sono i al della gli come più "
    "ma dei lo nel alla anche ha nella delle questo ci ad suo sua",
    "pt": "de a o que e do da em um para é com não uma os no se na por mais as dos como mas "
    "foi ao ele das tem à seu sua ou ser quando muito há nos já está também",
    "nl": "de van een het en in is dat op te zijn voor met die niet aan er om ook als bij "
    "maar dan wordt nog door naar over heeft ze wel of uit",
    "pl": "i w na z się nie do to że jest o jak a po co tak za od ale przez jego są już "
    "tym być może ich dla tego czy oraz który także lub przy jednak",
    "ru": "и в не на что с по как он это из у к за о от то но все она так его же бы для "
    "был было только уже или при были также может если этого они",
    "uk": "і в на що не з та до як за це у по від але його а для є був також які вона про",
    "el": "και το να η της του σε τα με για που την των από στο ο τη δεν θα είναι στην οι "
    "στη ένα τις μια αλλά στις τους όπως στα έχει",
    "hu": "a az és hogy nem is egy de meg van ez csak már el ki mint volt még azt sem ha "
    "vagy mert lesz pedig után kell által között",
    "sv": "och i att det som en på är av för med till den har de inte om ett var men så "
    "från sig hade vid kan när",
    "da": "og i at det en til er på som de med af for ikke den har der var et men om så "
    "sig fra kan vil blev",
    "no": "og i det som på er en til av at for med de ikke den har var om et men så fra "
    "kan vil ble seg",
    "fi": "ja on ei se että oli hän mutta kun myös ovat tai joka sen niin kuin mukaan vain "
    "jo nyt sekä",
    "cs": "a v se na je že s z do to o k i jako ale pro by jsou jeho po který tak jak však "
    "nebo při také",
    "tr": "ve bir bu da de için ile çok daha olarak gibi en ama o ne var olan kadar sonra "
    "her değil",
    "ro": "și de în a la cu o că pe din nu se un care mai este pentru sau fost au ca",
    "id": "yang dan di ini itu dengan untuk dari dalam tidak akan pada juga ke karena ada "
    "oleh saya mereka sebagai",
}
STOPWORDS: dict[str, frozenset[str]] = {k: frozenset(v.split()) for k, v in _LISTS.items()}
# Chinese and Japanese write no spaces: their share is counted over characters.
CJK_STOP_CHARS = frozenset(
    "的了是在和有我也不这就人都一上中大为说要他她们会对与及但被从而所以之其等个地到着"
)
CJK = re.compile(f"[{IDEOGRAPHS_AND_KANA}]")


# word -> languages that list it, so a page's words are looked up once each
LANGUAGES_OF: dict[str, tuple[str, ...]] = {}
for _lang, _words in STOPWORDS.items():
    for _word in _words:
        LANGUAGES_OF[_word] = (*LANGUAGES_OF.get(_word, ()), _lang)
GUESS_WORDS = 3000  # enough words to tell languages apart; a long page costs no more


def guess_language(words: Iterable[str]) -> str:
    """The language whose function words cover most of `words` (lower-cased); "" for none.

    Returns "zh" when most words are Chinese or Japanese. Reads at most 3,000 words.
    """
    counts = dict.fromkeys(STOPWORDS, 0)
    seen = Counter(itertools.islice(words, GUESS_WORDS))
    total = sum(seen.values())
    # A word can be CJK only if it sorts at or after U+3040 (its first character does), and
    # only the words of some list count: two filters instead of a look at every distinct word.
    ideographic = {word for word in seen if word >= "\u3040" and CJK.match(word)}
    cjk = sum(seen[word] for word in ideographic)
    for word in (seen.keys() & LANGUAGES_OF.keys()) - ideographic:
        times = seen[word]
        for lang in LANGUAGES_OF[word]:
            counts[lang] += times
    return language_of_counts(counts, cjk, total)


def language_of_counts(counts: dict[str, int], cjk: int, total: int) -> str:
    """`guess_language`'s answer from its counts: function words of each language (`counts`,
    in `STOPWORDS` order: a tie goes to the first), words that start with an ideograph or
    kana, and words read."""
    if total and cjk * 2 > total:
        return "zh"
    best = max(counts, key=counts.__getitem__)
    return best if counts[best] else ""


def stopword_share(words: list[str], text: str, language: str) -> float:
    """Share of `words` (lower-cased) that are function words of `language`."""
    if language == "zh":
        chars = CJK.findall(text)
        return sum(map(CJK_STOP_CHARS.__contains__, chars)) / len(chars) if chars else 0.0
    stop = STOPWORDS.get(language)
    if not stop or not words:
        return 0.0
    return sum(map(stop.__contains__, words)) / len(words)
