import { TimelineApp } from './timeline-app.js';

// The browser entry: built with esbuild into dist/assets/timeline.js.
document.addEventListener('DOMContentLoaded', () => new TimelineApp().start());
