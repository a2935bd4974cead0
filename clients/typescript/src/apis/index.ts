/* tslint:disable */
/* eslint-disable */
export * from './ApiDescriptionApi';
export * from './CategoriesApi';
export * from './FieldGroupsApi';
export * from './FieldsApi';
export * from './LabelsApi';
export * from './MenusApi';
export * from './ModulesApi';
export * from './PlatformApi';
export * from './RecordsApi';
export * from './SegmentsApi';
export * from './SpacesApi';
export * from './TeamsApi';
