// The sign-in page (LIVE-18, AMB-2): remembers where the person was going, and asks the
// gateway to print a new one-time link on its standard error. The link never comes here.

import { byId, param, show } from './view.js';
import { rememberDestination, sessionHadEnded } from './session.js';

rememberDestination();
show(byId('link-failed'), param('code') !== null);
// The panel found its session gone (the gateway restarted): say so (issue 28).
show(byId('session-ended'), sessionHadEnded());

byId('print-link').addEventListener('click', async () => {
  const outcome = byId('outcome');
  try {
    const answer = await fetch('/api/browser/signin-link', { method: 'POST', cache: 'no-store' });
    const text = await answer.text();
    let said;
    try {
      said = JSON.parse(text).said;
    } catch {
      said = text.trim();
    }
    outcome.textContent = said || `The gateway answered ${answer.status}.`;
  } catch {
    outcome.textContent = 'The gateway did not answer; is conch-gateway still running?';
  }
});
document.body.setAttribute('data-ready', '1');
