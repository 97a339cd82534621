import { detectLanguage } from './language';

describe('detectLanguage', () => {
  it.each([
    ['en', 'The committee approved the new budget after a long discussion about public transport.'],
    ['es', 'El comité aprobó el nuevo presupuesto después de una larga discusión sobre el transporte público.'],
    ['fr', 'Le comité a approuvé le nouveau budget après une longue discussion sur les transports publics.'],
    ['de', 'Der Ausschuss hat den neuen Haushalt nach einer langen Diskussion über den öffentlichen Verkehr genehmigt.'],
    ['ca', 'El comitè va aprovar el nou pressupost després d’una llarga discussió sobre el transport públic.'],
    ['ar', 'وافقت اللجنة على الميزانية الجديدة بعد نقاش طويل حول النقل العام.'],
    ['zh', '委员会在关于公共交通的长时间讨论后批准了新的预算。'],
    ['ja', '委員会は公共交通機関についての長い議論の後、新しい予算を承認しました。'],
  ])('detects %s', (expected, text) => {
    expect(detectLanguage(text)).toBe(expected);
  });

  it.each([
    ['empty', ''],
    ['a greeting', 'Hi'],
    ['a word', 'OK'],
    ['digits and symbols', '12345 — 678.90 / 2024-01-01'],
    ['only a URL and an address', 'https://example.org/a/b?c=d mail@example.com'],
  ])('is undefined for %s', (_name, text) => {
    expect(detectLanguage(text)).toBeUndefined();
  });

  it('ignores URLs when deciding', () => {
    expect(detectLanguage('Consulta https://example.com/the-english-page para ver el horario de la biblioteca municipal.')).toBe('es');
  });
});
