// A minimal todo client: logs in anonymously with realm-web and reads and writes todo.items.
import { config } from './config.js';

const app = new Realm.App({ id: config.appId, baseUrl: config.baseUrl });

async function main() {
  const user = app.currentUser ?? (await app.logIn(Realm.Credentials.anonymous()));
  const items = user.mongoClient('mongodb-atlas').db('todo').collection('items');
  const list = document.getElementById('items');
  const render = async () => {
    list.replaceChildren(...(await items.find({ owner_id: user.id })).map((item) => Object.assign(document.createElement('li'), { textContent: item.summary })));
  };
  document.getElementById('add').addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = document.getElementById('summary');
    await user.functions.addItem(input.value);
    input.value = '';
    await render();
  });
  await render();
}

main().catch((error) => {
  document.body.append(`Could not reach the app: ${error.message}`);
});
