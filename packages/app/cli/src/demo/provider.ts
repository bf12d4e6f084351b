/** The provider name `rein demo` gives its scripted model; a session it made names it. */
export const DEMO_PROVIDER = 'demo'
