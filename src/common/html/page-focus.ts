/** What an attribute value may not hold as it is. */
function escapedAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Where the keyboard focus lands as one rendered page loads. A form shown
 * again with its refusals gives it to the first field it marks invalid
 * (`autofocus`), so that field is in view and a screen reader reads its label
 * with the refusal beside it (`aria-describedby`); otherwise the page's own
 * choice stands (a message an action left, a value shown once). One per
 * render: the templates ask in the order they write the page.
 */
export class PageFocus {
  private taken = false;

  /** ` autofocus` for the first element refused with a message, else nothing. */
  readonly claim = (message: unknown): string => {
    if (!message || this.taken) return '';
    this.taken = true;
    return ' autofocus';
  };

  /**
   * The attributes of a field refused with `message`: invalid, described by
   * its `<id>-error` paragraph, and focused if it is the first on the page.
   */
  readonly invalid = (id: string, message: unknown): string => {
    if (!message) return '';
    return `aria-invalid="true" aria-describedby="${escapedAttribute(id)}-error"${this.claim(message)}`;
  };

  /** Whether a refused field (or form message) took the focus already. */
  readonly isTaken = (): boolean => this.taken;
}
