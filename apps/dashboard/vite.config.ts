import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Built by scripts/setup; the control plane serves dist/ at `/` with `script-src 'self'`, so the
// build must not inline scripts (Vite emits none) and must not inline assets as data: URLs into JS.
export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 600,
  },
  logLevel: 'warn',
});
