// The one way token counts and cost are written: per turn and for the whole session.

import { formatTokens, formatCost } from './ui.js';

/** "1.2k in · 300 out · 800 cached · $0.0123" */
export function usageText(u) {
  const parts = [formatTokens(u.input_tokens) + ' in', formatTokens(u.output_tokens) + ' out'];
  if (u.cache_read_tokens) parts.push(formatTokens(u.cache_read_tokens) + ' cached');
  if (u.cache_write_tokens) parts.push(formatTokens(u.cache_write_tokens) + ' cache writes');
  const cost = u.known === false ? null : formatCost(u.cost_usd);
  parts.push(cost || 'cost unknown');
  return parts.join(' · ');
}
