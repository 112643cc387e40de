import { load } from 'cheerio';

/** The main content of a page: `<main>`, `<article>` or `[role=main]`, else the body without navigation and chrome. */
export function mainContent(html: string): string {
  const $ = load(html);
  $(
    'script, style, noscript, template, nav, header, footer, aside, form, [role=navigation], [role=banner], ' +
      '[role=contentinfo]',
  ).remove();
  const main = $('main, [role=main], article').first();
  return (main.length ? main.html() : $('body').html()) ?? '';
}

/** The PDF links of an HTML page, absolute, without repeats, in page order. */
export function pdfLinks(html: string, base: string): string[] {
  const $ = load(html);
  const out = new Set<string>();
  $('a[href]').each((_, a) => {
    const href = $(a).attr('href') ?? '';
    let u: URL;
    try {
      u = new URL(href, base);
    } catch {
      return;
    }
    if (!/^https?:$/.test(u.protocol)) return;
    u.hash = '';
    if (/\.pdf$/i.test(u.pathname) || /application\/pdf/i.test($(a).attr('type') ?? '')) out.add(u.href);
  });
  return [...out];
}
