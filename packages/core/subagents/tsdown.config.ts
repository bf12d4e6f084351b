export { default } from '../../../scripts/tsdown-package.ts'
