// An expression. Returns {document, password, code, frames, widgets, tokens}: the
// document's address and start, whether a password or one-time-code field shows, visible
// frames' addresses, whether a captcha widget shows, and named fields' [name, value].
(() => {
  const visible = (el) => { const r = el.getBoundingClientRect(); const cs = getComputedStyle(el); return r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && cs.display !== 'none'; };
  const any = (selector) => Array.from(document.querySelectorAll(selector)).some(visible);
  return {
    document: location.href.split('#')[0] + ' @' + performance.timeOrigin,
    password: any('input[type=password]'),
    code: any('input[autocomplete~=one-time-code], input[name*=otp i], input[id*=otp i]'),
    frames: Array.from(document.querySelectorAll('iframe')).filter(visible).map(f => f.src || ''),
    widgets: any('.cf-turnstile, .g-recaptcha, .h-captcha, #px-captcha, #ddg-captcha'),
    tokens: Array.from(document.querySelectorAll('input[name], textarea[name]')).map(f => [f.name, f.value || '']),
  };
})()
