import { expect } from 'chai';
import { assertHtmlDepth, htmlDepth, HtmlTooDeepError, MAX_HTML_DEPTH } from '../../core/html/limits';

describe('HTML nesting limit', () => {
  it('measures the deepest nesting of explicit elements', () => {
    expect(htmlDepth('<div><p><b>x</b></p></div>')).to.equal(3);
    expect(htmlDepth('plain text')).to.equal(0);
  });

  it('counts implicit closes of p and li as closes, so long flat documents stay shallow', () => {
    expect(htmlDepth('<ul>' + '<li>item'.repeat(5000) + '</ul>')).to.equal(2);
    expect(htmlDepth('<p>para'.repeat(5000))).to.equal(1);
  });

  it('refuses a document nested deeper than the limit', () => {
    const deep = '<div>'.repeat(MAX_HTML_DEPTH + 1) + 'x' + '</div>'.repeat(MAX_HTML_DEPTH + 1);
    expect(() => assertHtmlDepth(deep)).to.throw(HtmlTooDeepError, /more than 1000 levels/);
    const ok = '<div>'.repeat(MAX_HTML_DEPTH) + 'x' + '</div>'.repeat(MAX_HTML_DEPTH);
    expect(() => assertHtmlDepth(ok)).to.not.throw();
  });

  it('stops early on a hostile document instead of walking all of it', () => {
    const hostile = '<div>'.repeat(200_000);
    expect(htmlDepth(hostile, 10)).to.equal(11);
  });
});
