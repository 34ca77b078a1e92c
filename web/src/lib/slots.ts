/**
 * The slots of a day as the slot forms edit them (« Mon planning »'s day-change request and the
 * decision panel's adjusted day): a draft per slot, its arithmetic, and the body the API reads.
 */
import type { Schemas } from '../api/client';

export interface SlotDraft {
  /** Stable across edits (React key and input ids). */
  key: number;
  /** The post of a planned slot, shown above its hours; null on a slot added by hand. */
  label: string | null;
  start_time: string;
  end_time: string;
  break_start_time: string;
  break_end_time: string;
  break_paid: boolean;
  post: number | null;
  establishment: number | null;
  is_remote: boolean;
}

let nextKey = 1;

export function emptySlot(): SlotDraft {
  return { key: nextKey++, label: null, start_time: '', end_time: '', break_start_time: '', break_end_time: '', break_paid: false, post: null, establishment: null, is_remote: false };
}

/** The worked blocks of a planned day (« Mon planning »), as editable slots with their post. */
export function slotsOfBlocks(blocks: Schemas['PlanningBlock'][]): SlotDraft[] {
  return blocks
    .filter((block) => block.kind === 'work' && !block.absence && block.start_time && block.end_time)
    .map((block) => ({
      ...emptySlot(),
      label: block.post_code ? `${block.post_code}${block.post_label ? ` · ${block.post_label}` : ''}` : null,
      start_time: block.start_time!,
      end_time: block.end_time!,
      break_start_time: block.break_start_time ?? '',
      break_end_time: block.break_end_time ?? '',
      break_paid: block.break_paid,
      post: block.post,
      establishment: block.establishment,
    }));
}

/** A slot of a request or of a day as the API answers it, as an editable slot. */
export function slotDraftOf(slot: Schemas['Slot']): SlotDraft {
  return {
    ...emptySlot(),
    start_time: slot.start_time,
    end_time: slot.end_time,
    break_start_time: slot.break_start_time ?? '',
    break_end_time: slot.break_end_time ?? '',
    break_paid: slot.break_paid,
    post: slot.post,
    establishment: slot.establishment,
    is_remote: slot.is_remote,
  };
}

/** The slot as the API reads it: an empty time is null (the server says what is missing, under its field). */
export function slotBody(slot: SlotDraft) {
  return {
    start_time: slot.start_time || null,
    end_time: slot.end_time || null,
    break_start_time: slot.break_start_time || null,
    break_end_time: slot.break_end_time || null,
    break_paid: slot.break_paid,
    post: slot.post,
    establishment: slot.establishment,
  };
}

const toMinutes = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
/** Minutes after the slot's start (a slot ending at or before its start ends the next day). */
const offset = (slot: SlotDraft, time: string) => (toMinutes(time) - toMinutes(slot.start_time) + 1440) % 1440;
const length = (slot: SlotDraft) => offset(slot, slot.end_time) || 1440;

/** Does the slot's break lie inside its hours (a slot without a full break or hours: yes)? */
export function breakFits(slot: SlotDraft): boolean {
  if (!slot.break_start_time || !slot.break_end_time || !slot.start_time || !slot.end_time) return true;
  const start = offset(slot, slot.break_start_time);
  const end = offset(slot, slot.break_end_time);
  return start < end && end <= length(slot);
}

/** Net minutes of the slots as they stand: an unpaid break is deducted, a paid one is not. */
export function netMinutes(slots: SlotDraft[]): number {
  return slots.reduce((total, slot) => {
    if (!slot.start_time || !slot.end_time) return total;
    const pause = slot.break_start_time && slot.break_end_time && !slot.break_paid ? offset(slot, slot.break_end_time) - offset(slot, slot.break_start_time) : 0;
    return total + length(slot) - Math.max(0, pause);
  }, 0);
}
