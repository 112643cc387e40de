/** Whisper's language names and ISO 639-1 codes, both ways (the OpenAI transcription protocol speaks names). */

/** Whisper's language names (as OpenAI's `verbose_json` gives them) → ISO 639-1 (Hawaiian and Cantonese have none). */
const LANGUAGE_CODES: Record<string, string> = Object.fromEntries(
  (
    'english en,chinese zh,german de,spanish es,russian ru,korean ko,french fr,japanese ja,portuguese pt,turkish tr,' +
    'polish pl,catalan ca,dutch nl,arabic ar,swedish sv,italian it,indonesian id,hindi hi,finnish fi,vietnamese vi,' +
    'hebrew he,ukrainian uk,greek el,malay ms,czech cs,romanian ro,danish da,hungarian hu,tamil ta,norwegian no,' +
    'thai th,urdu ur,croatian hr,bulgarian bg,lithuanian lt,latin la,maori mi,malayalam ml,welsh cy,slovak sk,' +
    'telugu te,persian fa,latvian lv,bengali bn,serbian sr,azerbaijani az,slovenian sl,kannada kn,estonian et,' +
    'macedonian mk,breton br,basque eu,icelandic is,armenian hy,nepali ne,mongolian mn,bosnian bs,kazakh kk,' +
    'albanian sq,swahili sw,galician gl,marathi mr,punjabi pa,sinhala si,khmer km,shona sn,yoruba yo,somali so,' +
    'afrikaans af,occitan oc,georgian ka,belarusian be,tajik tg,sindhi sd,gujarati gu,amharic am,yiddish yi,lao lo,' +
    'uzbek uz,faroese fo,haitian creole ht,pashto ps,turkmen tk,nynorsk nn,maltese mt,sanskrit sa,luxembourgish lb,' +
    'myanmar my,tibetan bo,tagalog tl,malagasy mg,assamese as,tatar tt,hawaiian haw,lingala ln,hausa ha,bashkir ba,' +
    'javanese jv,sundanese su,cantonese yue,burmese my,valencian ca,flemish nl,haitian ht,letzeburgesch lb,' +
    'pushto ps,panjabi pa,moldavian ro,moldovan ro,sinhalese si,castilian es,mandarin zh'
  )
    .split(',')
    .map((entry) => [entry.slice(0, entry.lastIndexOf(' ')), entry.slice(entry.lastIndexOf(' ') + 1)]),
);

/** The name OpenAI's endpoint answers for an ISO 639-1 code (e.g. `de` → `german`), or undefined. */
export function languageName(code: string): string | undefined {
  return Object.keys(LANGUAGE_CODES).find((name) => LANGUAGE_CODES[name] === code.toLowerCase());
}

/** A reported language as an ISO 639-1 code: a name (`German`), a code (`de`) or a locale (`de-DE`); else undefined. */
export function isoLanguage(reported: unknown): string | undefined {
  if (typeof reported !== 'string') return undefined;
  const s = reported.trim().toLowerCase();
  if (LANGUAGE_CODES[s]) return LANGUAGE_CODES[s];
  if (/^[a-z]{2,3}$/.test(s)) return s === 'jw' ? 'jv' : s;
  return /^[a-z]{2}[-_][a-z0-9]+$/.test(s) ? s.slice(0, 2) : undefined;
}
