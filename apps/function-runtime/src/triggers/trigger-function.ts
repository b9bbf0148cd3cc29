import { type Trigger } from '@tessera/app-config';

/** `function_name`, or the function of the trigger's FUNCTION event processor (the export layout's form). */
export function triggerFunctionName(trigger: Trigger): string | undefined {
  if (typeof trigger.function_name === 'string') return trigger.function_name;
  const processor = (trigger['event_processors'] as { FUNCTION?: { config?: { function_name?: unknown } } } | undefined)?.FUNCTION?.config?.function_name;
  return typeof processor === 'string' ? processor : undefined;
}
