// Small DOM helpers. Every text from the server (document texts, ids,
// messages) goes in through textContent, never as markup.

// <tag attrs...>children</tag>; a child string becomes a text node.
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k in e && k !== 'list') e[k] = v;
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

export function $(id) {
  return document.getElementById(id);
}

// The banner under the header: what went wrong (or right) last, for a person.
export function notify(message, kind = 'error') {
  const n = $('notice');
  n.textContent = message;
  n.className = 'notice ' + kind;
  n.hidden = !message;
}

// 1234567 -> "1,234,567"; uint64 fields arrive as strings in proto3 JSON.
export function count(v) {
  return Number(v || 0).toLocaleString('en-US');
}

// A score with four significant digits.
export function score(v) {
  return v === undefined || v === null ? '' : Number(v).toPrecision(4);
}

// `text` cut to about `max` characters, the query's terms marked.
export function snippet(text, terms = [], max = 160) {
  let t = String(text || '');
  const lower = t.toLowerCase();
  let start = 0;
  for (const term of terms) {
    const i = lower.indexOf(term);
    if (i >= 0) {
      start = Math.max(0, i - 40);
      break;
    }
  }
  t = (start > 0 ? '…' : '') + t.slice(start, start + max) + (t.length > start + max ? '…' : '');
  const span = el('span', { class: 'snippet' });
  if (terms.length === 0) {
    span.textContent = t;
    return span;
  }
  const escaped = terms.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const re = new RegExp('(' + escaped.join('|') + ')', 'gi');
  let last = 0;
  for (const m of t.matchAll(re)) {
    span.append(t.slice(last, m.index), el('mark', {}, m[0]));
    last = m.index + m[0].length;
  }
  span.append(t.slice(last));
  return span;
}
