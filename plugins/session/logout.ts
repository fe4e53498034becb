/** The Logout entry's address: the host's (runtime/logout-url.ts), which the user interface's sessions use too. */
export { databaseUiUrl, logoutUrl, PLACEHOLDER } from '../../runtime/host.ts';
