// Drops the named dependencies from package.json and the npm lock file in the current folder:
// their entries in the root's dependency lists and their own entries in the lock (and what is
// nested under them); every other entry of the lock stays as it is. Used where `npm ci` failed
// for packages the tests do not load, by datagen's env build and by a task's setup script.
const fs = require('fs');
const names = process.argv.slice(2);
const FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'];
const drop = (deps) => { for (const f of FIELDS) if (deps && deps[f]) for (const n of names) delete deps[f][n]; };
const write = (file, data) => fs.writeFileSync(file, JSON.stringify(data, null, 2) + '\n');

const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
drop(pkg);
write('package.json', pkg);
for (const file of ['package-lock.json', 'npm-shrinkwrap.json']) {
  if (!fs.existsSync(file)) continue;
  const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
  const packages = lock.packages || {};
  drop(packages['']);
  for (const key of Object.keys(packages)) {
    if (names.some((n) => key === 'node_modules/' + n || key.startsWith('node_modules/' + n + '/'))) delete packages[key];
  }
  for (const n of names) if (lock.dependencies) delete lock.dependencies[n]; // lockfileVersion 1
  write(file, lock);
}
