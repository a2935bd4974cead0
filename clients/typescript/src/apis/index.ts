/* tslint:disable */
/* eslint-disable */
export * from './AiApi';
export * from './ApiDescriptionApi';
export * from './ApiTokensApi';
export * from './CategoriesApi';
export * from './DataStructuresApi';
export * from './FieldGroupsApi';
export * from './FieldsApi';
export * from './FilesApi';
export * from './HistoryApi';
export * from './LabelsApi';
export * from './MenusApi';
export * from './ModulesApi';
export * from './OauthApi';
export * from './PlatformApi';
export * from './RecordsApi';
export * from './ScenariosApi';
export * from './SegmentsApi';
export * from './SessionsApi';
export * from './SocialSignInApi';
export * from './SpacesApi';
export * from './SystemsApi';
export * from './TeamsApi';
export * from './TwoFactorApi';
export * from './UsersApi';
export * from './WebhooksApi';
