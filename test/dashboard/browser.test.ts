// The dashboard project's one test file: every browser test module of test/dashboard (`*.browser.ts`, each a
// describe block with its own gateway and data), run one after another in one worker, beside the other projects'
// files in the other workers. One module alone: `npx vitest run --project dashboard -t '<its describe's name>'`.
//
// Why one file: as ten files, vitest ran four of them at once (a project's files are next to each other in its
// queue), and four browsers' worth of pages at once cost Chromium about 1.5 times the CPU per test on this virtual
// machine, and each file four times the time (docs/testing.md, One browser for the dashboard project).
import './dashboard.browser.js';
import './newcomer.browser.js';
import './pairing-window.browser.js';
import './message-actions.browser.js';
import './group-admin.browser.js';
import './webhooks-page.browser.js';
import './sandbox-account.browser.js';
import './chats.browser.js';
import './contact-card.browser.js';
import './event-tail.browser.js';
