# flake8: noqa

# import apis into api package
from records_client.api.ai_api import AiApi
from records_client.api.api_description_api import ApiDescriptionApi
from records_client.api.api_tokens_api import ApiTokensApi
from records_client.api.categories_api import CategoriesApi
from records_client.api.data_structures_api import DataStructuresApi
from records_client.api.field_groups_api import FieldGroupsApi
from records_client.api.fields_api import FieldsApi
from records_client.api.files_api import FilesApi
from records_client.api.history_api import HistoryApi
from records_client.api.labels_api import LabelsApi
from records_client.api.menus_api import MenusApi
from records_client.api.modules_api import ModulesApi
from records_client.api.oauth_api import OauthApi
from records_client.api.platform_api import PlatformApi
from records_client.api.records_api import RecordsApi
from records_client.api.scenarios_api import ScenariosApi
from records_client.api.segments_api import SegmentsApi
from records_client.api.sessions_api import SessionsApi
from records_client.api.social_sign_in_api import SocialSignInApi
from records_client.api.spaces_api import SpacesApi
from records_client.api.systems_api import SystemsApi
from records_client.api.teams_api import TeamsApi
from records_client.api.two_factor_api import TwoFactorApi
from records_client.api.users_api import UsersApi
from records_client.api.webhooks_api import WebhooksApi

