import { render } from 'preact';
import '../styles.css';
import { App } from './app.tsx';
import { applyTheme } from './prefs.ts';
import { startRouter } from './router.ts';
import { loadSession } from './session.ts';

applyTheme();
startRouter();
render(<App />, document.getElementById('app')!);
void loadSession().catch(() => {
  // The app shows why (sessionError) with Try again.
});
