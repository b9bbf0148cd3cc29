// Written when the app was created: the app id and the server this client talks to.
export const config = { appId: '__TESSERA_APP_ID__', baseUrl: '__TESSERA_BASE_URL__' };
