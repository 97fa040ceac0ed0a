// The copy button of a key, secret or link shown once, on the dashboard's and
// the portal's pages. Without JavaScript the field is still there to select
// and copy by hand.
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
