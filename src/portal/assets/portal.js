// The portal's one script. Opening a link: the token is in the fragment,
// which the browser never sends to a server; post it once, take it out of
// the address bar and the history, then go to the subscriptions (or to the
// page that says why the link did not open). Elsewhere: the copy button of
// a secret shown once. Every other page and form works without it.
(function () {
  const opener = document.getElementById('portal-open');
  const match = /^#token=([A-Za-z0-9_-]{1,200})$/.exec(window.location.hash);
  if (opener !== null && match !== null) {
    const status = document.getElementById('open-status');
    status.textContent = 'Opening the portal…';
    fetch(opener.getAttribute('data-exchange'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: match[1] }),
      credentials: 'same-origin',
    })
      .then((response) => {
        const next = response.headers.get('location');
        if (next === null) throw new Error('no next page');
        window.history.replaceState(null, '', window.location.pathname + window.location.search);
        window.location.replace(next);
      })
      .catch(() => {
        window.history.replaceState(null, '', window.location.pathname + window.location.search);
        status.textContent = 'The portal could not be opened. Check the connection and ask for a new link.';
      });
  }
})();

document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (button === null) return;
  const field = document.getElementById(button.getAttribute('data-copy'));
  const status = button.parentElement.querySelector('.copy-status');
  if (field === null) return;
  try {
    await navigator.clipboard.writeText(field.value);
    if (status) status.textContent = 'Copied to the clipboard.';
  } catch {
    field.focus();
    field.select();
    if (status) status.textContent = 'Copying is not allowed here: the text is selected, press Ctrl+C (or Cmd+C).';
  }
});
