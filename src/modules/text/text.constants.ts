/** The hold subject type of text requests: the use case holds under it, the abandoned-hold sweep releases by it. */
export const TEXT_HOLD_SUBJECT = 'text';
