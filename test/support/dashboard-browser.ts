import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

// Page-side callbacks below run in the browser; the project compiles without the DOM library.
interface PageElement {
  tagName: string;
  className: string;
  getBoundingClientRect(): { right: number };
  closest(selector: string): PageElement | null;
  parentElement: PageElement | null;
}
declare const document: {
  activeElement: { matches(selector: string): boolean } | null;
  documentElement: { scrollWidth: number };
  querySelectorAll(selector: string): Iterable<PageElement>;
};
declare const window: { innerWidth: number };

/** Debian's Chromium, as CI installs it (.ci/run). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

export function chromiumMissingReason(): string | null {
  return existsSync(CHROMIUM_PATH)
    ? null
    : `no Chromium at ${CHROMIUM_PATH}; install it with "apt-get install -y chromium" (.ci/run does) to run them`;
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** Screenshots are taken only when asked: KEEP_SCREENSHOTS=1, or UPDATE_SCREENSHOTS=1 to refresh the guides'. */
const KEEP_SCREENSHOTS = process.env['KEEP_SCREENSHOTS'] === '1' || process.env['UPDATE_SCREENSHOTS'] === '1';

/**
 * One headless Chromium for a test file, with a fresh profile, and the
 * checks every page gets: console errors are collected, axe-core runs in the
 * page, and the page must fit a 375 px screen. Screenshots (PNG at both
 * widths) are for a person to look at: when they are kept, they go to a
 * temporary folder the test names; otherwise no file is written.
 */
export class DashboardBrowser {
  readonly consoleErrors: string[] = [];
  readonly screenshots: string[] = [];
  readonly axeReport: Array<{ page: string; violations: AxeViolation[] }> = [];
  private readonly axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

  private constructor(
    readonly context: BrowserContext,
    readonly page: Page,
    /** Where screenshots go, or null when none are kept. */
    readonly folder: string | null,
    private readonly profile: string,
  ) {
    page.on('console', (message) => {
      if (message.type() === 'error') this.consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => this.consoleErrors.push(`${page.url()}: ${error.message}`));
  }

  static async launch(): Promise<DashboardBrowser> {
    const folder = KEEP_SCREENSHOTS ? mkdtempSync(join(tmpdir(), 'dashboard-browser-')) : null;
    const profile = mkdtempSync(join(tmpdir(), 'dashboard-chromium-profile-'));
    // Running as root (CI containers) needs --no-sandbox; the rest keeps Chromium off the network and quiet.
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 1440, height: 900 },
    });
    const page = context.pages()[0] ?? (await context.newPage());
    return new DashboardBrowser(context, page, folder, profile);
  }

  async close(): Promise<void> {
    await this.context.close();
    rmSync(this.profile, { recursive: true, force: true });
  }

  /**
   * Presses Tab until the element matching `selector` has the focus: it
   * proves the control is reachable in the tab order, and leaves it focused
   * for the keyboard to use.
   */
  async tabTo(selector: string, maxPresses = 120): Promise<void> {
    for (let i = 0; i < maxPresses; i += 1) {
      await this.page.keyboard.press('Tab');
      const focused = await this.page.evaluate((wanted) => document.activeElement?.matches(wanted) === true, selector);
      if (focused) return;
    }
    assert.fail(`${selector} was not reached with the Tab key on ${this.page.url()}`);
  }

  /** Tabs to a control, then presses a key on it (Enter for links and buttons, Space for checkboxes). */
  async press(selector: string, key = 'Enter'): Promise<void> {
    await this.tabTo(selector);
    await this.page.keyboard.press(key);
  }

  /** Tabs to a text field and types into it. */
  async type(selector: string, text: string): Promise<void> {
    await this.tabTo(selector);
    await this.page.keyboard.type(text);
  }

  /** Presses a key and waits for the page it navigates to. */
  async submitWith(selector: string, key = 'Enter'): Promise<void> {
    await this.tabTo(selector);
    await Promise.all([this.page.waitForNavigation(), this.page.keyboard.press(key)]);
  }

  /** axe-core in the page (evaluated through the debugging protocol, so the page's CSP stays as served). */
  async checkAccessibility(name: string): Promise<AxeViolation[]> {
    await this.page.evaluate(this.axeSource);
    const violations = await this.page.evaluate(async () => {
      const axe = (
        globalThis as unknown as {
          axe: {
            run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }>;
            getRules(tags: string[]): Array<{ ruleId: string }>;
          };
        }
      ).axe;
      // WCAG 2.2 AA's rules (target size) are off in axe by default; they run here on top of the default set.
      const wcag22aa = Object.fromEntries(axe.getRules(['wcag22aa']).map((rule) => [rule.ruleId, { enabled: true }]));
      // Only violations are reported: axe then skips building a selector for every passing node (the same
      // rules run, and each violation keeps all its nodes), the part of its work that grows with the page.
      const result = await axe.run(document, { resultTypes: ['violations'], rules: wcag22aa });
      return result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target })),
      }));
    });
    this.axeReport.push({ page: name, violations });
    return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  }

  /** A full-page screenshot, when they are kept. */
  private async keepScreenshot(file: string): Promise<void> {
    if (this.folder === null) return;
    const path = join(this.folder, file);
    await this.page.screenshot({ path, fullPage: true });
    this.screenshots.push(path);
  }

  /** Asserts nothing overflows a 375 px viewport; screenshots at 1440 px and 375 px when they are kept. */
  async screenshot(name: string): Promise<void> {
    await this.keepScreenshot(`${name}-1440.png`);
    await this.page.setViewportSize({ width: 375, height: 800 });
    try {
      const overflow = await this.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      const culprits =
        overflow <= 0
          ? []
          : await this.page.evaluate(() =>
              [...document.querySelectorAll('body *')]
                .filter((element) => element.getBoundingClientRect().right > window.innerWidth + 1)
                .filter((element) => element.parentElement?.closest('.table-wrap') == null)
                .map((element) => `${element.tagName.toLowerCase()}.${element.className}`)
                .slice(0, 8),
            );
      assert.ok(overflow <= 0, `${name} is ${overflow}px wider than a 375px screen: ${culprits.join(', ')}`);
      await this.keepScreenshot(`${name}-375.png`);
    } finally {
      await this.page.setViewportSize({ width: 1440, height: 900 });
    }
  }

  /** Every page check at once: no serious or critical axe violation, readable at both widths. */
  async checkPage(name: string): Promise<void> {
    const serious = await this.checkAccessibility(name);
    assert.deepEqual(serious, [], `${name}: serious or critical accessibility violations`);
    await this.screenshot(name);
  }
}
