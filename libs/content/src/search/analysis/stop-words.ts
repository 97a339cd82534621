/**
 * Short stop-word lists, keyed by analyser id (the Snowball algorithm name). Lowercase, as the
 * words appear after NFKC + lowercasing (accents kept; Arabic lists go through the Arabic
 * normaliser when loaded).
 *
 * Why so short: BM25's IDF already discounts frequent words, the lists only trim the index and
 * the noise of function words. And because a query is analysed with every language of the
 * knowledge box, a stop word of any of them (of three letters or more) is dropped from the whole
 * query; so the non-English lists leave out words that are also English content words (German
 * "die", "war", "hat", "man"; Dutch "door", "men"; Spanish "son", "sin", "era", "sea", "hay";
 * French "son", "plus"; Italian "come"...).
 */
export const STOP_WORDS: Readonly<Record<string, readonly string[]>> = {
  // Lucene's classic English set.
  english: [
    'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no',
    'not', 'of', 'on', 'or', 'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this',
    'to', 'was', 'will', 'with',
  ],
  spanish: [
    'a', 'al', 'como', 'con', 'cual', 'cuando', 'de', 'del', 'desde', 'e', 'el', 'él', 'ella', 'en',
    'entre', 'es', 'esa', 'ese', 'eso', 'esta', 'este', 'esto', 'fue', 'ha', 'hasta', 'la', 'las', 'le',
    'lo', 'los', 'más', 'me', 'mi', 'muy', 'ni', 'nos', 'o', 'para', 'pero', 'por', 'porque', 'qué',
    'que', 'se', 'ser', 'si', 'sí', 'sobre', 'su', 'sus', 'te', 'tu', 'u', 'un', 'una', 'y', 'ya',
  ],
  portuguese: [
    'a', 'à', 'ao', 'aos', 'as', 'às', 'com', 'como', 'da', 'das', 'de', 'do', 'dos', 'e', 'é', 'ela',
    'elas', 'ele', 'eles', 'em', 'entre', 'essa', 'esse', 'este', 'esta', 'eu', 'foi', 'isso', 'já',
    'lhe', 'mais', 'mas', 'me', 'na', 'nas', 'não', 'nem', 'no', 'nos', 'num', 'numa', 'o', 'os', 'ou',
    'para', 'pela', 'pelas', 'pelo', 'pelos', 'por', 'quando', 'que', 'se', 'seu', 'seus', 'sua',
    'suas', 'também', 'um', 'uma',
  ],
  french: [
    'à', 'a', 'au', 'aux', 'avec', 'c', 'ce', 'ces', 'cette', 'd', 'dans', 'de', 'des', 'du', 'elle', 'en',
    'est', 'et', 'été', 'eux', 'il', 'ils', 'j', 'je', 'l', 'la', 'le', 'les', 'leur', 'lui', 'm', 'ma',
    'mais', 'me', 'même', 'mes', 'moi', 'mon', 'n', 'ne', 'nos', 'notre', 'nous', 'on', 'ont', 'ou',
    'où', 'par', 'pas', 'pour', 'qu', 'que', 'qui', 's', 'sa', 'se', 'ses', 'sont', 'sur', 't', 'ta',
    'te', 'tes', 'toi', 'ton', 'tu', 'un', 'une', 'vos', 'votre', 'vous', 'y',
  ],
  german: [
    'aber', 'als', 'am', 'an', 'auch', 'auf', 'aus', 'bei', 'bis', 'da', 'damit', 'das', 'dass', 'daß',
    'dem', 'den', 'denn', 'der', 'des', 'dich', 'dir', 'du', 'durch', 'ein', 'eine', 'einem', 'einen',
    'einer', 'eines', 'er', 'es', 'für', 'ich', 'ihr', 'ihre', 'im', 'ist', 'mit', 'mich', 'mir', 'nach', 'nicht',
    'noch', 'nur', 'oder', 'sich', 'sie', 'sind', 'über', 'um', 'und', 'uns', 'vom', 'von', 'vor',
    'wenn', 'werden', 'wie', 'wir', 'wird', 'wurde', 'zu', 'zum', 'zur',
  ],
  italian: [
    'a', 'agli', 'ai', 'al', 'alla', 'alle', 'allo', 'anche', 'che', 'ci', 'con', 'da', 'dai', 'dal',
    'dalla', 'degli', 'dei', 'del', 'della', 'delle', 'dello', 'di', 'e', 'è', 'ed', 'gli', 'i', 'il',
    'in', 'la', 'le', 'lo', 'loro', 'lui', 'ma', 'ne', 'negli', 'nei', 'nel', 'nella', 'nelle', 'nello',
    'non', 'o', 'per', 'più', 'questa', 'questo', 'se', 'si', 'sono', 'su', 'sua', 'sui', 'sul',
    'sulla', 'suo', 'tra', 'un', 'una', 'uno',
  ],
  dutch: [
    'aan', 'al', 'als', 'bij', 'dan', 'dat', 'de', 'deze', 'dit', 'een', 'en', 'geen', 'haar', 'heeft',
    'het', 'hij', 'hun', 'in', 'is', 'je', 'maar', 'met', 'naar', 'niet', 'nog', 'of', 'om', 'ook',
    'op', 'te', 'tot', 'uit', 'van', 'voor', 'was', 'wat', 'werd', 'wordt', 'ze', 'zij', 'zijn',
  ],
  // Function words and question words (queries are often questions: "ما هي", "من هو", "متى").
  arabic: [
    'في', 'من', 'على', 'إلى', 'عن', 'مع', 'ما', 'ماذا', 'لماذا', 'متى', 'أين', 'كيف', 'كم', 'هل', 'هو',
    'هي', 'هم', 'هذا', 'هذه', 'ذلك', 'تلك', 'هؤلاء', 'الذي', 'التي', 'الذين', 'اللذين', 'اللتين',
    'أن', 'إن', 'أو', 'ثم', 'قد', 'لا', 'لم', 'لن', 'كان', 'كانت', 'يكون', 'تكون', 'كل', 'بين', 'عند',
    'حتى', 'إذا', 'منذ', 'بعد', 'قبل', 'كما', 'أي', 'إلا', 'غير', 'لكن', 'بل', 'و', 'ف', 'ب', 'ل',
  ],
};

/** Elided articles and pronouns dropped before an apostrophe ("l'homme" → "homme"), as Lucene does. */
export const ELISIONS: Readonly<Record<string, readonly string[]>> = {
  french: ['l', 'm', 't', 'qu', 'n', 's', 'j', 'd', 'c', 'jusqu', 'quoiqu', 'lorsqu', 'puisqu'],
  italian: ['c', 'l', 'all', 'dall', 'dell', 'nell', 'sull', 'coll', 'pell', 'gl', 'agl', 'dagl', 'degl', 'negl', 'sugl', 'un', 'm', 't', 's', 'v', 'd'],
  catalan: ['d', 'l', 'm', 'n', 's', 't'],
  irish: ['d', 'm', 'b'],
};
